// The live event stream (docs/api.md, "Events") read with fetch rather than EventSource, so it
// can send the same Authorization header as every other request. Reconnects by itself with
// exponential backoff (from the server's `retry:` hint up to 30 s, with jitter), and
// treats 45 s without a byte (the service sends a comment every 15 s) as a dead link.
// A reconnect sends the last event id (`Last-Event-ID`), so the service sends only what was
// missed, or `event: reset` and its snapshot when it no longer has that.

import { SSEParser } from "./sse-parser.js";

const MAX_DELAY = 30_000;
const SILENCE_LIMIT = 45_000;

export class EventStream {
    #url;
    #api;
    #handlers;
    #baseDelay = 2000;
    #attempt = 0;
    #controller = null;
    #wake = null;
    #lastEventID = "";

    /**
     * @param {string} url
     * @param {import("./api.js").Api} api
     * @param {{
     *   onEvent: (type: string, data: any) => void,
     *   onOpen: (reconnected: boolean) => void,
     *   onStatus: (status: "connecting" | "open" | "disconnected" | "unauthorized", detail?: {retryIn: number}) => void,
     * }} handlers
     */
    constructor(url, api, handlers) {
        this.#url = url;
        this.#api = api;
        this.#handlers = handlers;
    }

    start() {
        this.#run();
    }

    /** Drops the current connection (if any) and connects again at once. */
    reconnectNow() {
        this.#attempt = 0;
        this.#controller?.abort();
        this.#wake?.();
    }

    async #run() {
        let opened = false;
        for (;;) {
            this.#handlers.onStatus("connecting");
            const controller = new AbortController();
            this.#controller = controller;
            try {
                const response = await fetch(this.#url, {
                    headers: {
                        Accept: "text/event-stream",
                        ...(this.#lastEventID ? { "Last-Event-ID": this.#lastEventID } : {}),
                        ...this.#api.authHeaders(),
                    },
                    cache: "no-store",
                    signal: controller.signal,
                });
                if (response.status === 401) {
                    this.#handlers.onStatus("unauthorized");
                    if (!(await this.#api.renewToken())) await this.#sleep(Infinity);
                    continue;
                }
                if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`);
                this.#attempt = 0;
                this.#handlers.onStatus("open");
                this.#handlers.onOpen(opened);
                opened = true;
                await this.#read(response.body, controller);
            } catch {
                // Refused, reset or aborted: all mean "try again" below.
            }
            const delay = this.#nextDelay();
            this.#handlers.onStatus("disconnected", { retryIn: delay });
            await this.#sleep(delay);
        }
    }

    async #read(body, controller) {
        const parser = new SSEParser(
            ({ type, data, id }) => {
                this.#lastEventID = id;
                let json;
                try {
                    json = JSON.parse(data);
                } catch {
                    return;
                }
                this.#handlers.onEvent(type, json);
            },
            (retry) => (this.#baseDelay = Math.max(500, Math.min(retry, MAX_DELAY)))
        );
        // The id carries over connections, as EventSource's does: an event without one
        // (`reset`) does not forget it.
        parser.lastEventID = this.#lastEventID;
        const reader = body.pipeThrough(new TextDecoderStream()).getReader();
        let watchdog = setTimeout(() => controller.abort(), SILENCE_LIMIT);
        try {
            for (;;) {
                const { value, done } = await reader.read();
                if (done) return;
                clearTimeout(watchdog);
                watchdog = setTimeout(() => controller.abort(), SILENCE_LIMIT);
                parser.push(value);
            }
        } finally {
            clearTimeout(watchdog);
            reader.cancel().catch(() => {});
        }
    }

    #nextDelay() {
        const exponential = Math.min(MAX_DELAY, this.#baseDelay * 2 ** this.#attempt);
        this.#attempt += 1;
        // Jitter, so that many dashboards do not all come back in the same instant.
        return Math.round(exponential * (0.8 + Math.random() * 0.4));
    }

    #sleep(milliseconds) {
        return new Promise((resolve) => {
            let timer = null;
            const done = () => {
                clearTimeout(timer);
                this.#wake = null;
                resolve();
            };
            if (Number.isFinite(milliseconds)) timer = setTimeout(done, milliseconds);
            this.#wake = done;
        });
    }
}
