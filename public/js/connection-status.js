// The "Live / Disconnected" indicator in the header. Its label is a polite live region;
// the retry countdown beside it is hidden from screen readers so it is not read out
// every second.

const LABEL = {
    connecting: "Connecting…",
    open: "Live",
    disconnected: "Disconnected",
    unauthorized: "Token required",
};

export class ConnectionStatus {
    #element;
    #label;
    #detail;
    #timer = 0;

    /** @param {HTMLElement} element */
    constructor(element) {
        this.#element = element;
        this.#label = element.querySelector("[data-part=label]");
        this.#detail = element.querySelector("[data-part=detail]");
    }

    get state() {
        return this.#element.dataset.state;
    }

    /** @param {"connecting"|"open"|"disconnected"|"unauthorized"} state */
    show(state, { retryIn } = {}) {
        // "Connecting" right after a failure is not news: keep saying "Disconnected".
        if (state === "connecting" && this.state === "disconnected") return;
        clearInterval(this.#timer);
        this.#element.dataset.state = state;
        if (this.#label.textContent !== LABEL[state]) this.#label.textContent = LABEL[state];
        this.#detail.textContent = "";
        if (state !== "disconnected") return;
        const until = Date.now() + (retryIn ?? 0);
        const render = () => {
            const seconds = Math.max(0, Math.ceil((until - Date.now()) / 1000));
            this.#detail.textContent = seconds > 0 ? `retrying in ${seconds} s` : "retrying…";
        };
        render();
        this.#timer = setInterval(render, 1000);
    }
}
