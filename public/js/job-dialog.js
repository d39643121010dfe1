// One job in detail: its URL, priority, dependencies, webhook and proxy, editable (PATCH
// /jobs/ID); a map of its file (which ranges are on disk and which are being fetched) and
// its webhook deliveries, refreshed while the dialog is open.

import { formatBytes } from "./format.js";
import { renderIntegrity, renderSources } from "./integrity-view.js";

const REFRESH_MS = 500;

export class JobDialog {
    #dialog;
    #api;
    #onChange;
    #job = null;
    #timer = null;

    /**
     * @param {HTMLDialogElement} dialog
     * @param {import("./api.js").Api} api
     * @param {(job: object) => void} onChange called with the job an edit returned
     */
    constructor(dialog, api, onChange) {
        this.#dialog = dialog;
        this.#api = api;
        this.#onChange = onChange;
        const form = dialog.querySelector("form");
        form.addEventListener("submit", (event) => {
            event.preventDefault();
            this.#save();
        });
        dialog.querySelector("[data-action=close]").addEventListener("click", () => dialog.close());
        dialog.addEventListener("close", () => this.#stop());
    }

    /** Opens the dialog on `job`; `opener` gets the focus back when it closes. */
    open(job, opener) {
        this.#job = job;
        const $ = (name) => this.#dialog.querySelector(`[data-role=${name}]`);
        $("title").textContent = job.filename ?? job.url;
        $("id").textContent = job.id;
        this.#field("url").value = job.url;
        this.#field("priority").value = String(job.priority);
        this.#field("after").value = job.after.join(", ");
        this.#field("notify").value = job.notify ?? "";
        this.#field("proxy").value = job.proxy ?? "";
        this.#field("keepBytes").checked = false;
        this.#error("");
        this.update(job);
        this.#dialog.addEventListener("close", () => opener?.focus(), { once: true });
        this.#dialog.showModal();
        this.#refresh();
    }

    get jobID() {
        return this.#dialog.open ? this.#job?.id : undefined;
    }

    /** A newer version of the shown job (from the event stream). */
    update(job) {
        this.#job = job;
        const waiting = job.waitingFor.length
            ? `Waits for ${job.waitingFor.join(", ")}.`
            : job.after.length
              ? "Its dependencies have completed."
              : "No dependencies.";
        this.#dialog.querySelector("[data-role=waiting]").textContent = waiting;
        this.#dialog.querySelector("[data-role=state]").textContent = job.state;
        renderIntegrity(this.#dialog.querySelector("[data-role=integrity]"), job);
        renderSources(this.#dialog.querySelector("[data-role=sources]"), job);
        // A completed job cannot be edited, also when it completes while the dialog is open.
        const editable = job.state !== "completed";
        for (const input of this.#dialog.querySelectorAll("[data-edit]")) input.disabled = !editable;
    }

    #field(name) {
        return this.#dialog.querySelector(`[name=${name}]`);
    }

    #error(message) {
        const error = this.#dialog.querySelector("[data-role=error]");
        error.textContent = message;
        error.hidden = !message;
    }

    async #save() {
        const job = this.#job;
        const changes = {};
        const url = this.#field("url").value.trim();
        if (url !== job.url) changes.url = url;
        const priorityText = this.#field("priority").value.trim();
        const priority = Number(priorityText);
        if (priorityText === "" || !Number.isInteger(priority)) return this.#error("Priority must be a whole number.");
        if (priority !== job.priority) changes.priority = priority;
        const after = this.#field("after").value.split(/[\s,]+/).filter(Boolean);
        if (after.join(",") !== job.after.join(",")) changes.after = after;
        // Empty removes them; a proxy left as shown (credentials as ***) is not changed.
        for (const name of ["notify", "proxy"]) {
            const value = this.#field(name).value.trim();
            if (value !== (job[name] ?? "")) changes[name] = value === "" ? null : value;
        }
        if (changes.url && this.#field("keepBytes").checked) changes.keepBytes = true;
        if (Object.keys(changes).length === 0) return this.#dialog.close();
        try {
            const updated = await this.#api.editJob(job.id, changes);
            this.#onChange(updated);
            this.#dialog.close();
        } catch (error) {
            this.#error(error.message);
            const field = { url: "url", priority: "priority", after: "after", notify: "notify", proxy: "proxy" }[error.field];
            if (field) this.#field(field).focus();
        }
    }

    async #refresh() {
        const id = this.#job?.id;
        if (!this.#dialog.open || !id) return;
        try {
            const [segments, deliveries] = await Promise.all([this.#api.segments(id), this.#api.deliveries(id)]);
            this.#render(segments);
            this.#renderDeliveries(deliveries);
        } catch {
            // Deleted meanwhile, or the service is away: the map keeps what it showed.
        }
        if (this.#dialog.open && this.#job?.id === id) this.#timer = setTimeout(() => this.#refresh(), REFRESH_MS);
    }

    #stop() {
        clearTimeout(this.#timer);
        this.#timer = null;
    }

    #renderDeliveries(deliveries) {
        const list = this.#dialog.querySelector("[data-role=deliveries]");
        list.dataset.count = String(deliveries.length);
        if (deliveries.length === 0) {
            const none = document.createElement("li");
            none.className = "hint";
            none.textContent = "None yet: a webhook is told when the job completes, fails or is removed.";
            list.replaceChildren(none);
            return;
        }
        list.replaceChildren(
            ...deliveries.map((delivery) => {
                const item = document.createElement("li");
                item.dataset.state = delivery.state;
                const tries = delivery.attempts === 1 ? "1 attempt" : `${delivery.attempts} attempts`;
                const last = delivery.lastStatus != null ? `, last answer ${delivery.lastStatus}` : delivery.lastError ? `, ${delivery.lastError}` : "";
                const next = delivery.nextAttemptAt ? `, next ${new Date(delivery.nextAttemptAt).toLocaleTimeString()}` : "";
                item.textContent = `${delivery.event} → ${delivery.url}: ${delivery.state} (${tries}${last}${next})`;
                return item;
            })
        );
    }

    #render(segments) {
        const map = this.#dialog.querySelector("[data-role=segments]");
        const summary = this.#dialog.querySelector("[data-role=segments-summary]");
        const total = segments.length ? segments[segments.length - 1].end : 0;
        const bars = [];
        let done = 0;
        let active = 0;
        for (const segment of segments) {
            done += segment.done;
            if (segment.active) active += 1;
            if (total === 0) continue;
            const left = (segment.start / total) * 100;
            const width = ((segment.end - segment.start) / total) * 100;
            const filled = segment.end > segment.start ? (segment.done / (segment.end - segment.start)) * 100 : 0;
            bars.push({ left, width, filled, active: segment.active });
        }
        map.replaceChildren(
            ...bars.map(({ left, width, filled, active }) => {
                const part = document.createElement("span");
                part.className = active ? "segment active" : "segment";
                part.style.left = `${left}%`;
                part.style.width = `${width}%`;
                const fill = document.createElement("span");
                fill.className = "segment-done";
                fill.style.width = `${filled}%`;
                part.append(fill);
                return part;
            })
        );
        map.dataset.segments = String(segments.length);
        map.dataset.active = String(active);
        summary.textContent = segments.length
            ? `${segments.length} segments, ${formatBytes(done)} of ${formatBytes(total)} on disk, ${active} being fetched`
            : "Nothing on disk yet.";
    }
}
