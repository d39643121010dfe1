// Incremental parser for the `text/event-stream` format (WHATWG HTML §9.2.6), fed with
// decoded text as it arrives. Only what Sluice sends matters here: `id:`, `event:`, `data:`
// (several lines are joined with "\n"), `retry:` and `:` comments, with any line ending.

export class SSEParser {
    #buffer = "";
    #event = "";
    #data = [];
    /** The last event id (kept across events, as EventSource does): sent back on a reconnect. */
    lastEventID = "";
    #onEvent;
    #onRetry;

    /**
     * @param {(event: {type: string, data: string, id: string}) => void} onEvent
     * @param {(milliseconds: number) => void} onRetry
     */
    constructor(onEvent, onRetry = () => {}) {
        this.#onEvent = onEvent;
        this.#onRetry = onRetry;
    }

    push(text) {
        this.#buffer += text;
        const match = /\r\n|\r|\n/g;
        let start = 0;
        for (;;) {
            match.lastIndex = start;
            const found = match.exec(this.#buffer);
            if (!found) break;
            // A lone "\r" at the end may be the first half of "\r\n": wait for more.
            if (found[0] === "\r" && found.index === this.#buffer.length - 1) break;
            this.#line(this.#buffer.slice(start, found.index));
            start = found.index + found[0].length;
        }
        this.#buffer = this.#buffer.slice(start);
    }

    #line(line) {
        if (line === "") {
            if (this.#data.length > 0) {
                this.#onEvent({ type: this.#event || "message", data: this.#data.join("\n"), id: this.lastEventID });
            }
            this.#event = "";
            this.#data = [];
            return;
        }
        if (line.startsWith(":")) return;
        const colon = line.indexOf(":");
        const field = colon === -1 ? line : line.slice(0, colon);
        let value = colon === -1 ? "" : line.slice(colon + 1);
        if (value.startsWith(" ")) value = value.slice(1);
        switch (field) {
            case "event":
                this.#event = value;
                break;
            case "id":
                if (!value.includes("\0")) this.lastEventID = value;
                break;
            case "data":
                this.#data.push(value);
                break;
            case "retry":
                if (/^\d+$/.test(value)) this.#onRetry(Number(value));
                break;
        }
    }
}
