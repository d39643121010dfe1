// The access token for a service started with `--token`: kept in localStorage, asked for
// in a dialog whenever the service answers 401. Callers that hit a 401 at the same time
// share one prompt.

const KEY = "sluice.token";

export class TokenStore extends EventTarget {
    get() {
        try {
            return localStorage.getItem(KEY) || "";
        } catch {
            return "";
        }
    }

    set(token) {
        try {
            if (token) localStorage.setItem(KEY, token);
            else localStorage.removeItem(KEY);
        } catch {
            // Storage disabled (private mode): the token lives only as long as the page.
        }
        this.dispatchEvent(new Event("change"));
    }
}

export class TokenPrompt {
    #dialog;
    #form;
    #input;
    #message;
    #store;
    #pending = null;

    /** @param {HTMLDialogElement} dialog @param {TokenStore} store */
    constructor(dialog, store) {
        this.#dialog = dialog;
        this.#store = store;
        this.#form = dialog.querySelector("form");
        this.#input = dialog.querySelector("input[name=token]");
        this.#message = dialog.querySelector("[data-role=token-message]");
        this.#form.addEventListener("submit", (event) => {
            event.preventDefault();
            const token = this.#input.value.trim();
            if (!token) {
                this.#input.setAttribute("aria-invalid", "true");
                this.#input.focus();
                return;
            }
            this.#finish(token);
        });
        dialog.addEventListener("cancel", (event) => {
            event.preventDefault();
            this.#finish(null);
        });
        dialog.querySelector("[data-action=cancel]").addEventListener("click", () => this.#finish(null));
    }

    /**
     * Shows the dialog (once, however many callers ask) and resolves with the token
     * entered, already stored, or `null` when the user cancels.
     */
    ask({ rejected = false } = {}) {
        if (this.#pending) return this.#pending.promise;
        let resolve;
        const promise = new Promise((r) => (resolve = r));
        this.#pending = { promise, resolve };
        this.#message.textContent = rejected
            ? "The service did not accept that token. Enter the token it was started with."
            : "This Sluice service needs an access token (the value of --token or SLUICE_TOKEN).";
        this.#input.value = "";
        this.#input.removeAttribute("aria-invalid");
        this.#dialog.showModal();
        this.#input.focus();
        return promise;
    }

    get isOpen() {
        return this.#pending !== null;
    }

    #finish(token) {
        if (!this.#pending) return;
        const { resolve } = this.#pending;
        this.#pending = null;
        this.#dialog.close();
        if (token) this.#store.set(token);
        resolve(token);
    }
}
