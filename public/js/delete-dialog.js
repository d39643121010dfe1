// The confirmation before DELETE /jobs/ID, with the choice to delete the finished file too.

export class DeleteDialog {
    #dialog;
    #name;
    #fileOption;
    #checkbox;
    #note;
    #resolve = null;

    /** @param {HTMLDialogElement} dialog */
    constructor(dialog) {
        this.#dialog = dialog;
        this.#name = dialog.querySelector("[data-role=name]");
        this.#fileOption = dialog.querySelector("[data-role=file-option]");
        this.#checkbox = dialog.querySelector("input[name=deleteFile]");
        this.#note = dialog.querySelector("[data-role=note]");
        dialog.addEventListener("close", () => {
            const confirmed = dialog.returnValue === "delete";
            this.#resolve?.({ confirmed, deleteFile: confirmed && !this.#fileOption.hidden && this.#checkbox.checked });
            this.#resolve = null;
        });
    }

    /**
     * Asks about `job`; resolves with `{confirmed, deleteFile}` when the dialog closes
     * (Escape and "Cancel" are `confirmed: false`).
     */
    ask(job, name) {
        this.#resolve?.({ confirmed: false, deleteFile: false });
        this.#name.textContent = name;
        const finished = job.state === "completed" && Boolean(job.path);
        this.#fileOption.hidden = !finished;
        this.#checkbox.checked = false;
        this.#note.textContent = finished
            ? "The job leaves the list. The file stays in the downloads folder unless you tick the box."
            : "The download stops and its partial data is deleted.";
        this.#dialog.returnValue = "";
        return new Promise((resolve) => {
            this.#resolve = resolve;
            this.#dialog.showModal();
            // The safe choice has the focus, so Enter alone never deletes anything.
            this.#dialog.querySelector("button[value=cancel]").focus();
        });
    }
}
