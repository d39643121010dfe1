// "Add a download": sends the form to POST /jobs and shows the API's validation errors
// next to the field they are about. The API is the only validator, so the page and
// scripts get the same rules and the same messages.

import { ApiError } from "./api.js";

/** Which field an error from POST /jobs is about (null: the form as a whole). */
export function fieldForError(error) {
    switch (error.code) {
        case "invalid_url":
        case "unsupported_scheme":
            return "url";
        case "invalid_filename":
            return "filename";
        case "invalid_field": {
            // invalid_field names the field at the start of its message
            // ("connections must be between 1 and 16").
            const first = /^([a-z0-9]+)\b/i.exec(error.message)?.[1];
            // The digest field takes a SHA-256 or any `checksum`: both are reported on it.
            if (first === "checksum" || first === "give") return "sha256";
            return ["url", "filename", "connections", "sha256"].includes(first) ? first : null;
        }
        default:
            return null;
    }
}

export class AddForm {
    #form;
    #api;
    #status;
    #formError;
    #onCreated;

    /**
     * @param {HTMLFormElement} form
     * @param {import("./api.js").Api} api
     * @param {(job: object) => void} onCreated
     */
    constructor(form, api, onCreated) {
        this.#form = form;
        this.#api = api;
        this.#onCreated = onCreated;
        this.#status = form.querySelector("[data-role=status]");
        this.#formError = form.querySelector("[data-role=form-error]");
        form.addEventListener("submit", (event) => {
            event.preventDefault();
            this.#submit();
        });
        // An error goes away as soon as its field is edited.
        form.addEventListener("input", (event) => {
            if (event.target.name) this.#showError(event.target.name, "");
        });
    }

    #body() {
        const data = new FormData(this.#form);
        const body = { url: String(data.get("url") ?? "").trim() };
        const filename = String(data.get("filename") ?? "").trim();
        if (filename) body.filename = filename;
        const connections = String(data.get("connections") ?? "").trim();
        // Sent as typed (a number when it is one) so the API reports a bad value itself.
        if (connections) body.connections = /^-?\d+$/.test(connections) ? Number(connections) : connections;
        // A bare digest is a SHA-256; ALGO=HEX (sha-512, sha-1, md5) is a `checksum`.
        const digest = String(data.get("sha256") ?? "").trim();
        if (digest.includes("=")) body.checksum = digest;
        else if (digest) body.sha256 = digest.toLowerCase();
        return body;
    }

    async #submit() {
        const button = this.#form.querySelector("button[type=submit]");
        if (button.getAttribute("aria-disabled") === "true") return;
        this.#clearErrors();
        button.setAttribute("aria-disabled", "true");
        this.#status.textContent = "Adding…";
        try {
            const job = await this.#api.createJob(this.#body());
            this.#onCreated(job);
            const name = job.filename || job.url;
            this.#form.reset();
            this.#status.textContent = `Added ${name}.`;
            this.#form.elements.url.focus();
        } catch (error) {
            this.#status.textContent = "";
            const apiError = error instanceof ApiError ? error : new ApiError(0, "unknown", String(error));
            const field = fieldForError(apiError);
            this.#showError(field, apiError.message);
            (field ? this.#form.elements[field] : this.#form.elements.url).focus();
        } finally {
            button.removeAttribute("aria-disabled");
        }
    }

    #clearErrors() {
        for (const element of this.#form.querySelectorAll("[data-error-for]")) this.#showError(element.dataset.errorFor, "");
        this.#showError(null, "");
    }

    /** Shows (or, with "", clears) a message next to `field`, or for the form when null. */
    #showError(field, message) {
        if (!field) {
            this.#formError.textContent = message;
            this.#formError.hidden = !message;
            return;
        }
        const output = this.#form.querySelector(`[data-error-for="${field}"]`);
        const input = this.#form.elements[field];
        if (!output || !input) return this.#showError(null, message);
        output.textContent = message;
        output.hidden = !message;
        if (message) input.setAttribute("aria-invalid", "true");
        else input.removeAttribute("aria-invalid");
    }
}
