// The queue's controls: a switch that pauses and resumes the queue (running downloads go
// on), how many run at once, a speed limit for all of them, and actions on every job.

const MIB = 1024 * 1024;

export class QueuePanel {
    #form;
    #api;
    #say;
    #fields;
    #status;
    /** The queue as last read, and the rate text shown for it. */
    #queue = null;
    #rateText = "";

    /**
     * @param {HTMLFormElement} form
     * @param {HTMLElement} bulk the container of the [data-bulk] buttons
     * @param {import("./api.js").Api} api
     * @param {(message: string, options?: {error?: boolean}) => void} say
     */
    constructor(form, bulk, api, say) {
        this.#form = form;
        this.#api = api;
        this.#say = say;
        this.#fields = {
            running: form.querySelector("#queue-running"),
            maxActive: form.querySelector("#queue-max-active"),
            rate: form.querySelector("#queue-rate"),
        };
        this.#status = form.querySelector("[data-role=status]");
        this.#fields.running.addEventListener("change", () => this.#apply({ paused: !this.#fields.running.checked }));
        form.addEventListener("submit", (event) => {
            event.preventDefault();
            const changes = this.#limits();
            if (changes) this.#apply(changes);
        });
        bulk.addEventListener("click", (event) => {
            const button = event.target.closest("button[data-bulk]");
            if (button) this.#bulk(button.dataset.bulk);
        });
    }

    async load() {
        try {
            this.#show(await this.#api.getQueue());
        } catch {
            // The page reports the connection; the panel keeps its last values.
        }
    }

    #show(queue) {
        this.#queue = queue;
        this.#fields.running.checked = !queue.paused;
        this.#fields.maxActive.value = String(queue.maxActive);
        // Shown exactly (a limit under 0.01 MiB/s is not rounded to 0); sent only when edited.
        this.#rateText = queue.limitRate == null ? "" : String(queue.limitRate / MIB);
        this.#fields.rate.value = this.#rateText;
        this.#form.dataset.paused = String(queue.paused);
    }

    /** The at-once and speed fields that were changed, or null (with the error shown) when invalid. */
    #limits() {
        const changes = {};
        const maxActive = Number(this.#fields.maxActive.value);
        if (!Number.isInteger(maxActive) || maxActive < 1 || maxActive > 64) {
            this.#report("Downloads at once must be a whole number from 1 to 64.", this.#fields.maxActive);
            return null;
        }
        if (maxActive !== this.#queue?.maxActive) changes.maxActive = maxActive;
        const text = this.#fields.rate.value.trim();
        if (text !== this.#rateText) {
            const mib = Number(text);
            if (text !== "" && (!Number.isFinite(mib) || mib <= 0)) {
                this.#report("The speed limit must be a positive number of MiB/s, or empty for none.", this.#fields.rate);
                return null;
            }
            changes.limitRate = text === "" ? null : Math.max(1, Math.round(mib * MIB));
        }
        return changes;
    }

    async #apply(changes) {
        try {
            const queue = await this.#api.updateQueue(changes);
            this.#show(queue);
            this.#status.textContent = queue.paused ? "Queue paused: nothing new starts." : "Queue saved.";
            this.#status.dataset.kind = "info";
        } catch (error) {
            this.#report(error.message, null);
            await this.load();
        }
    }

    async #bulk(action) {
        try {
            if (action === "pause") {
                const { jobs } = await this.#api.pauseAll();
                this.#say(`Paused ${count(jobs.length)}.`);
            } else if (action === "resume") {
                const { jobs } = await this.#api.resumeAll();
                this.#say(`Resumed ${count(jobs.length)}.`);
            } else if (action === "clear") {
                const { deleted } = await this.#api.deleteAll("completed,failed");
                this.#say(`Cleared ${count(deleted)} (their files are kept).`);
            }
        } catch (error) {
            this.#say(error.message, { error: true });
        }
    }

    #report(message, field) {
        this.#status.textContent = message;
        this.#status.dataset.kind = "error";
        field?.focus();
    }
}

function count(n) {
    return n === 1 ? "1 download" : `${n} downloads`;
}
