// The header's total: how many downloads run (the service's count) and their speed together,
// from the events of the running jobs (at most the queue's `maxActive` per node, whatever the
// list holds). A running job the stream's first snapshot left out (it holds the newest live
// jobs) is counted, and its speed added with its next progress event.

import { formatSpeed } from "./format.js";

export class SpeedTotal {
    /** @type {Map<string, number>} running job → its speed */
    #speeds = new Map();
    #running;
    #speed;
    #frame = 0;
    /** How many run, as the service last counted them; null before the first count. */
    #counted = null;

    /** @param {HTMLElement} element with [data-part=running] and [data-part=speed] */
    constructor(element) {
        this.#running = element.querySelector("[data-part=running]");
        this.#speed = element.querySelector("[data-part=speed]");
    }

    update(job) {
        if (job.state === "running") this.#speeds.set(job.id, job.speed ?? 0);
        else this.#speeds.delete(job.id);
        this.#schedule();
    }

    remove(id) {
        this.#speeds.delete(id);
        this.#schedule();
    }

    /** The service's count of running jobs. */
    setRunning(count) {
        this.#counted = count;
        this.#schedule();
    }

    /** The stream starts again with every live job: what was heard before may be gone. */
    clear() {
        this.#speeds.clear();
        this.#schedule();
    }

    #schedule() {
        if (!this.#frame) this.#frame = requestAnimationFrame(() => this.#render());
    }

    #render() {
        this.#frame = 0;
        let total = 0;
        for (const speed of this.#speeds.values()) total += speed;
        const running = this.#counted ?? this.#speeds.size;
        this.#running.textContent = `${running.toLocaleString("en-US")} running`;
        this.#speed.textContent = formatSpeed(total);
    }
}
