// The job list, windowed: only the rows on screen (and a few beyond) are in the DOM, read
// a page at a time from the server (`JobPages`), placed by `visibleRows` at their offset in
// a list as tall as all of them. The server counts and filters; the event stream keeps the
// rows on screen live. A burst of events costs one render per frame.

import { JobPages, PAGE_SIZE } from "./job-pages.js";
import { JobRow } from "./job-row.js";
import { listHeight, pagesFor, visibleRows } from "./list-window.js";

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
    /** @type {Map<string, JobRow>} the rows in the DOM, by job id */
    #rows = new Map();
    /** @type {Map<string, string>} every job's state as last heard: tells a move from progress */
    #states = new Map();
    #pages;
    #counts = null;
    #countElements;
    #list;
    #template;
    #empty;
    #frame = 0;
    #rowHeight = 0;
    #loadCounts;
    #refreshTimer = 0;
    #lastRefresh = 0;

    /**
     * @param {{list: HTMLElement, template: HTMLTemplateElement, empty: HTMLElement,
     *          counts: Record<string, HTMLElement>, api: import("./api.js").Api,
     *          loadCounts: () => Promise<Record<string, number>>}} parts
     */
    constructor({ list, template, empty, counts, api, loadCounts }) {
        this.#list = list;
        this.#template = template;
        this.#empty = empty;
        this.#countElements = counts;
        this.#loadCounts = loadCounts;
        this.#pages = new JobPages(api, () => this.#schedule());
        addEventListener("scroll", () => this.#schedule(), { passive: true });
        addEventListener("resize", () => {
            this.#rowHeight = 0;
            this.#schedule();
        });
    }

    get filter() {
        return this.#pages.filter;
    }

    /** The list's length under the filter, from the server's counts (null before the first). */
    get total() {
        if (!this.#counts) return null;
        const filter = this.#pages.filter;
        return filter === "all" ? STATES.reduce((sum, state) => sum + (this.#counts[state] ?? 0), 0) : this.#counts[filter] ?? 0;
    }

    /** A job as the service now has it (an event, or an action's answer). */
    upsert(job) {
        const before = this.#states.get(job.id);
        // A finished job is forgotten: its next event, if any, is a change anyway.
        if (job.state === "completed" || job.state === "failed") this.#states.delete(job.id);
        else this.#states.set(job.id, job.state);
        const index = this.#pages.find(job.id);
        const filter = this.#pages.filter;
        if (index !== undefined) {
            if (filter === "all" || job.state === filter) {
                this.#pages.replace(index, job);
                this.#rows.get(job.id)?.update(job);
            } else {
                this.#drop(job.id);
            }
        }
        // Made, or moved between states: counts and places change.
        if (before !== job.state) this.refreshSoon();
    }

    remove(id) {
        this.#states.delete(id);
        this.#drop(id);
        this.refreshSoon();
    }

    /** A job out of the list now, not only when its page is read again. */
    #drop(id) {
        this.#pages.drop(id);
        const row = this.#rows.get(id);
        if (row && !row.busy) {
            row.element.remove();
            this.#rows.delete(id);
        }
    }

    /** Forget the states heard: the event stream starts again with its snapshot. */
    restart() {
        this.#states.clear();
        this.refreshSoon();
    }

    /** The row of a job on screen, or undefined. */
    row(id) {
        return this.#rows.get(id);
    }

    setFilter(state) {
        this.#list.dataset.filter = state;
        this.#pages.setFilter(state);
        scrollTo({ top: Math.min(scrollY, this.#listTop()) });
        this.#render();
    }

    /** Dims the list while the event stream is down: what it shows may be out of date. */
    setStale(stale) {
        this.#list.classList.toggle("stale", stale);
    }

    /** Reads the counts and the pages on screen again, now. */
    async refresh() {
        clearTimeout(this.#refreshTimer);
        this.#refreshTimer = 0;
        this.#lastRefresh = performance.now();
        this.#pages.invalidate();
        try {
            this.#counts = await this.#loadCounts();
        } catch {
            // Kept as they were; the next change reads them again.
        }
        this.#render();
    }

    /** A refresh at most every 500 ms, however many changes arrive. */
    refreshSoon() {
        if (this.#refreshTimer) return;
        const wait = Math.max(0, 500 - (performance.now() - this.#lastRefresh));
        this.#refreshTimer = setTimeout(() => this.refresh(), wait);
    }

    /** Renders now rather than at the next frame (tests, focus moves). */
    flush() {
        cancelAnimationFrame(this.#frame);
        this.#frame = 0;
        this.#render();
    }

    #schedule() {
        if (!this.#frame) this.#frame = requestAnimationFrame(() => this.flush());
    }

    #listTop() {
        return this.#list.getBoundingClientRect().top + scrollY;
    }

    /** One row's height with the gap below it, measured from a row in the list. */
    #measure() {
        if (this.#rowHeight) return this.#rowHeight;
        const probe = this.#rows.values().next().value?.element ?? this.#probe();
        const gap = parseFloat(getComputedStyle(this.#list).rowGap) || 0;
        const height = probe.getBoundingClientRect().height;
        if (!probe.dataset.id) probe.remove();
        if (height > 0) this.#rowHeight = height + gap;
        return this.#rowHeight || 100;
    }

    #probe() {
        const row = new JobRow(this.#template, "");
        delete row.element.dataset.id;
        row.element.style.visibility = "hidden";
        this.#list.append(row.element);
        return row.element;
    }

    #render() {
        const total = this.total ?? 0;
        const filter = this.#pages.filter;
        this.#showCounts();
        this.#empty.hidden = this.#counts === null || total > 0;
        if (!this.#empty.hidden) this.#empty.textContent = EMPTY_TEXT[filter];
        const rowHeight = this.#measure();
        const height = listHeight(total, rowHeight);
        this.#list.style.height = `${height}px`;
        // A list of one page is rendered whole (cheap, and the browser's find sees it all);
        // a longer one only where it is on screen.
        const { first, last, top } =
            total <= PAGE_SIZE
                ? { first: 0, last: total - 1, top: 0 }
                : visibleRows({ total, rowHeight, scrolled: scrollY - this.#listTop(), viewport: innerHeight });
        this.#pages.want(pagesFor(first, last, PAGE_SIZE));
        const shown = new Set();
        let previous = null;
        for (let index = first; index <= last; index += 1) {
            const job = this.#pages.job(index);
            if (!job || shown.has(job.id)) continue;
            shown.add(job.id);
            let row = this.#rows.get(job.id);
            if (!row) {
                row = new JobRow(this.#template, job.id);
                this.#rows.set(job.id, row);
            }
            row.update(job);
            const element = row.element;
            element.style.transform = `translateY(${top + (index - first) * rowHeight}px)`;
            element.setAttribute("aria-posinset", String(index + 1));
            element.setAttribute("aria-setsize", String(total));
            // In list order in the DOM, for the keyboard and screen readers; a row holding the
            // focus is not moved (a move would lose it), the next rows follow it.
            const place = previous ? previous.nextElementSibling : this.#list.firstElementChild;
            const focused = element.isConnected && element.contains(document.activeElement);
            if (place !== element && !focused) this.#list.insertBefore(element, place);
            previous = element;
        }
        for (const [id, row] of this.#rows) {
            // A row being acted on, or holding the keyboard's focus, stays until it is done.
            if (shown.has(id) || row.busy || row.element.contains(document.activeElement)) continue;
            row.element.remove();
            this.#rows.delete(id);
        }
    }

    #showCounts() {
        if (!this.#counts) return;
        const counts = { all: STATES.reduce((sum, state) => sum + (this.#counts[state] ?? 0), 0), ...this.#counts };
        for (const [key, element] of Object.entries(this.#countElements)) {
            const text = (counts[key] ?? 0).toLocaleString("en-US");
            if (element.textContent !== text) element.textContent = text;
        }
    }
}
