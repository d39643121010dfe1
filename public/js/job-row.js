// One job's row in the list: built once from the <template>, then patched field by field,
// writing to the DOM only what changed since the last patch (the list may hold 1,000 rows
// and get several updates a second for each running one).

import { fileURL, formatBytes, formatETA, formatSpeed, percentDone } from "./format.js";

const TOGGLE = {
    queued: { action: "pause", label: "Pause" },
    running: { action: "pause", label: "Pause" },
    paused: { action: "resume", label: "Resume" },
    failed: { action: "resume", label: "Retry" },
};

export class JobRow {
    /** The job last shown. */
    job = null;
    busy = false;
    #shown = {};

    /** @param {HTMLTemplateElement} template */
    constructor(template, id) {
        this.element = template.content.firstElementChild.cloneNode(true);
        this.element.dataset.id = id;
        const $ = (name) => this.element.querySelector(`[data-part=${name}]`);
        this.parts = {
            link: $("link"),
            title: $("title"),
            badge: $("badge"),
            progress: $("progress"),
            percent: $("percent"),
            host: $("host"),
            bytes: $("bytes"),
            speed: $("speed"),
            eta: $("eta"),
            error: $("error"),
            toggle: $("toggle"),
            details: $("details"),
            remove: $("delete"),
        };
    }

    /** The host the job downloads from (as `sluice ls` shows it), without credentials. */
    static host(job) {
        try {
            return new URL(job.url).host;
        } catch {
            return "";
        }
    }

    /** A name for the job, even before the service knows the file's name: the rule `sluice ls` follows too. */
    static displayName(job) {
        if (job.filename) return job.filename;
        try {
            const segment = new URL(job.url).pathname.split("/").filter(Boolean).pop();
            return segment ? decodeURIComponent(segment) : job.url;
        } catch {
            return job.url;
        }
    }

    update(job) {
        this.job = job;
        const p = this.parts;
        const name = JobRow.displayName(job);
        const percent = percentDone(job);
        const completed = job.state === "completed" && job.path;
        const toggle = TOGGLE[job.state];

        this.#set("state", job.state, (state) => {
            this.element.dataset.state = state;
            p.badge.textContent = state;
        });
        this.#set("name", name, () => {
            p.title.textContent = name;
            p.link.textContent = name;
            p.progress.setAttribute("aria-label", `Progress of ${name}`);
            p.remove.setAttribute("aria-label", `Delete ${name}`);
            p.details.setAttribute("aria-label", `Details of ${name}`);
        });
        this.#set("url", job.url, (url) => (this.element.title = url));
        this.#set("path", completed ? job.path : "", (path) => {
            p.link.hidden = !path;
            p.title.hidden = Boolean(path);
            if (path) {
                p.link.href = fileURL(path);
                p.link.download = path.split("/").pop();
            } else {
                p.link.removeAttribute("href");
            }
        });
        const running = job.state === "running";
        // Size unknown: an indeterminate bar while bytes flow, an empty one otherwise, no percent.
        this.#set("percent", percent ?? (running ? "indeterminate" : "unknown"), (value) => {
            if (value === "indeterminate") p.progress.removeAttribute("value");
            else p.progress.value = typeof value === "number" ? value : 0;
            p.percent.textContent = typeof value === "number" ? `${value} %` : "";
        });
        let bytes = `${formatBytes(job.bytesDone)} / ${formatBytes(job.bytesTotal)}`;
        if (job.state === "completed") bytes = formatBytes(job.bytesDone);
        else if (job.bytesTotal == null) bytes = job.bytesDone > 0 ? `${formatBytes(job.bytesDone)} so far` : "";
        this.#set("bytes", bytes, (text) => (p.bytes.textContent = text));
        // In a cluster, which node runs it.
        this.#set("host", JobRow.host(job), (text) => (p.host.textContent = text));
        // No speed until one is measured: a job that just started is not "0 B/s".
        const speed = running && job.speed > 0 ? formatSpeed(job.speed) + (job.node ? ` on ${job.node}` : "") : "";
        this.#set("speed", speed, (text) => (p.speed.textContent = text));
        const eta = running ? formatETA(job.eta) : job.state === "queued" ? queuedText(job) : "";
        this.#set("eta", eta, (text) => (p.eta.textContent = running && text ? `${text} left` : text));
        const error = job.state === "failed" && job.error ? job.error.message : "";
        this.#set("error", error, (text) => {
            p.error.hidden = !text;
            p.error.textContent = text;
            p.error.title = text;
        });
        this.#set("toggle", toggle ? `${toggle.action}|${toggle.label}|${name}` : "", () => {
            p.toggle.hidden = !toggle;
            if (!toggle) return;
            p.toggle.dataset.action = toggle.action;
            p.toggle.textContent = toggle.label;
            p.toggle.setAttribute("aria-label", `${toggle.label} ${name}`);
        });
    }

    /** Runs `apply` only when `value` differs from what the row shows for `key`. */
    #set(key, value, apply) {
        if (this.#shown[key] === value) return;
        this.#shown[key] = value;
        apply(value);
    }

    /** Marks the action buttons busy while a request for this job is in flight. */
    // (aria-disabled rather than disabled, so a focused button keeps the keyboard focus).
    setBusy(busy) {
        this.busy = busy;
        for (const button of [this.parts.toggle, this.parts.remove]) {
            button.setAttribute("aria-disabled", String(busy));
        }
        this.element.setAttribute("aria-busy", String(busy));
    }
}

/** Why a queued job waits: what holds it (`heldBy`), other jobs, a slot, or its server's retry time. */
function queuedText(job) {
    if (job.heldBy === "startAt" && job.startAt) {
        const at = new Date(job.startAt);
        if (!Number.isNaN(at.getTime())) return `starts at ${at.toLocaleString([], { dateStyle: "medium", timeStyle: "short" })}`;
    }
    if (job.heldBy === "window") return "held: the schedule's window is closed";
    if (job.heldBy && job.heldBy !== "dependencies") return `held: ${job.heldBy}`;
    const waiting = job.waitingFor ?? [];
    if (waiting.length === 1) return "waiting for 1 other job";
    if (waiting.length > 1) return `waiting for ${waiting.length} other jobs`;
    if (!job.retryAt) return "waiting for a free slot";
    const at = new Date(job.retryAt);
    if (Number.isNaN(at.getTime())) return "waiting for a free slot";
    const time = at.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
    return `the server asked to wait: retries at ${time}`;
}
