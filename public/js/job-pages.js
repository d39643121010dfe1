// The job list as the server pages it: `GET /jobs?state=S&offset=N&limit=PAGE`, newest
// first, a page read when one of its rows is about to be shown and kept until the list
// changes. The counts (`GET /queue`) give the list's length, so no page is read to learn
// it, and 200,000 jobs cost the pages on screen, not 200,000 rows.

export const PAGE_SIZE = 100;

export class JobPages {
    #api;
    #filter = "all";
    /** @type {Map<number, object[]>} page number → its jobs (with the generation read for) */
    #pages = new Map();
    /** Pages being read: one read of a page at a time, however often the list changes. */
    #reading = new Set();
    /** @type {Map<number, number>} page number → the generation its read failed in */
    #failed = new Map();
    /** Bumped when the list changes: a page read before is read again. */
    #generation = 0;
    #onChange;

    /**
     * @param {import("./api.js").Api} api
     * @param {() => void} onChange called when a page arrives
     */
    constructor(api, onChange) {
        this.#api = api;
        this.#onChange = onChange;
    }

    get filter() {
        return this.#filter;
    }

    /** Another filter: every page is read again, and none of the old ones is shown. */
    setFilter(filter) {
        this.#filter = filter;
        this.#pages.clear();
        this.invalidate();
    }

    /**
     * The list changed (a job made, deleted, or moved between states): pages shown are read
     * again, and keep showing what they had until then (no flicker).
     */
    invalidate() {
        this.#generation += 1;
        this.#failed.clear();
    }

    /** The job at a row, or undefined while its page is not read. */
    job(index) {
        return this.#pages.get(Math.floor(index / PAGE_SIZE))?.[index % PAGE_SIZE];
    }

    /** Where a job is among the pages read, or undefined. */
    find(id) {
        for (const [page, jobs] of this.#pages) {
            const slot = jobs.findIndex((job) => job?.id === id);
            if (slot >= 0) return page * PAGE_SIZE + slot;
        }
        return undefined;
    }

    /** A newer snapshot of a job already in a page, in place. */
    replace(index, job) {
        const jobs = this.#pages.get(Math.floor(index / PAGE_SIZE));
        if (jobs) jobs[index % PAGE_SIZE] = job;
    }

    /** A job gone from the list (deleted, or out of the filter): its slot shows nothing until the page is read again. */
    drop(id) {
        const index = this.find(id);
        if (index !== undefined) this.replace(index, undefined);
    }

    /** Reads the pages named that are not read in this generation; drops the others. */
    want(pages) {
        const keep = new Set(pages);
        for (const page of this.#pages.keys()) if (!keep.has(page)) this.#pages.delete(page);
        for (const page of pages) {
            if (this.#reading.has(page) || this.#failed.get(page) === this.#generation) continue;
            if (this.#pages.get(page)?.generation === this.#generation) continue;
            this.#read(page);
        }
    }

    async #read(page) {
        const generation = this.#generation;
        const filter = this.#filter;
        this.#reading.add(page);
        try {
            const { jobs } = await this.#api.listJobs({
                limit: PAGE_SIZE,
                offset: page * PAGE_SIZE,
                state: filter === "all" ? undefined : filter,
            });
            // A read that the list changed under is still the freshest there is: it is shown,
            // and read again (its generation is old) at the next render.
            if (filter !== this.#filter) return;
            jobs.generation = generation;
            this.#pages.set(page, jobs);
        } catch {
            // Not again until the list changes (the connection status tells the user).
            this.#failed.set(page, this.#generation);
        } finally {
            this.#reading.delete(page);
            this.#onChange();
        }
    }
}
