// The live job list. Events only record the newest snapshot per job; one
// requestAnimationFrame later the rows that changed are patched in place (new ones added
// at the top, newest first), so a burst of 1,000 jobs or many progress events per second
// cost one layout per frame. Filtering by state is a CSS rule on the list, not a re-render.

import { JobRow } from "./job-row.js";

export const STATES = ["queued", "running", "paused", "completed", "failed"];

const EMPTY_TEXT = {
    all: "No downloads yet. Add one above.",
    queued: "No queued downloads.",
    running: "Nothing is downloading right now.",
    paused: "No paused downloads.",
    completed: "No completed downloads.",
    failed: "No failed downloads.",
};

export class JobsView {
    /** @type {Map<string, JobRow>} */
    #rows = new Map();
    /** @type {Map<string, object | null>} id → newest snapshot, or null when removed */
    #pending = new Map();
    #frame = 0;
    #list;
    #template;
    #empty;
    #counts;
    #filter = "all";

    /**
     * @param {{list: HTMLElement, template: HTMLTemplateElement, empty: HTMLElement,
     *          counts: Record<string, HTMLElement>}} elements
     */
    constructor({ list, template, empty, counts }) {
        this.#list = list;
        this.#template = template;
        this.#empty = empty;
        this.#counts = counts;
        this.#render();
    }

    upsert(job) {
        this.#pending.set(job.id, job);
        this.#schedule();
    }

    remove(id) {
        this.#pending.set(id, null);
        this.#schedule();
    }

    /** The row of a job, or undefined. */
    row(id) {
        return this.#rows.get(id);
    }

    /** Ids of all jobs shown or about to be. */
    ids() {
        const ids = new Set(this.#rows.keys());
        for (const [id, job] of this.#pending) job ? ids.add(id) : ids.delete(id);
        return ids;
    }

    setFilter(state) {
        this.#filter = state;
        this.#list.dataset.filter = state;
        this.#render();
    }

    /** Dims the list while the event stream is down: what it shows may be out of date. */
    setStale(stale) {
        this.#list.classList.toggle("stale", stale);
    }

    /** Applies pending changes now rather than at the next frame (tests, focus moves). */
    flush() {
        cancelAnimationFrame(this.#frame);
        this.#frame = 0;
        this.#apply();
    }

    #schedule() {
        if (!this.#frame) this.#frame = requestAnimationFrame(() => this.flush());
    }

    #apply() {
        if (this.#pending.size === 0) return;
        const added = [];
        for (const [id, job] of this.#pending) {
            let row = this.#rows.get(id);
            if (!job) {
                row?.element.remove();
                this.#rows.delete(id);
                continue;
            }
            if (!row) {
                row = new JobRow(this.#template, id);
                this.#rows.set(id, row);
                added.push(row.element);
            }
            row.update(job);
        }
        this.#pending.clear();
        if (added.length > 0) {
            // Events arrive oldest first; the list shows newest first.
            const fragment = document.createDocumentFragment();
            for (let index = added.length - 1; index >= 0; index -= 1) fragment.append(added[index]);
            this.#list.prepend(fragment);
        }
        this.#render();
    }

    /** Counts per state in the filter and the empty-list message. */
    #render() {
        const counts = { all: this.#rows.size };
        for (const state of STATES) counts[state] = 0;
        for (const row of this.#rows.values()) counts[row.job.state] += 1;
        for (const [key, element] of Object.entries(this.#counts)) {
            const text = String(counts[key] ?? 0);
            if (element.textContent !== text) element.textContent = text;
        }
        const empty = counts[this.#filter] === 0;
        this.#empty.hidden = !empty;
        if (empty) this.#empty.textContent = EMPTY_TEXT[this.#filter];
    }
}
