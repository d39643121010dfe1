// The jobs API (CONTRACT §2) over fetch: JSON in and out, the bearer token when there is
// one, a token prompt and one retry on 401, and `{"error":{"code","message"}}` bodies
// turned into ApiError.

export class ApiError extends Error {
    /** @param {number} status @param {string} code @param {string} message */
    constructor(status, code, message) {
        super(message);
        this.name = "ApiError";
        this.status = status;
        this.code = code;
    }
}

export class Api {
    #tokens;
    #prompt;

    /**
     * @param {import("./token.js").TokenStore} tokens
     * @param {import("./token.js").TokenPrompt} prompt
     */
    constructor(tokens, prompt) {
        this.#tokens = tokens;
        this.#prompt = prompt;
    }

    listJobs({ limit = 1000, after } = {}) {
        const query = new URLSearchParams({ limit: String(limit) });
        if (after) query.set("after", after);
        return this.request("GET", `jobs?${query}`);
    }

    createJob(body) {
        return this.request("POST", "jobs", body);
    }

    pause(id) {
        return this.request("POST", `jobs/${encodeURIComponent(id)}/pause`);
    }

    resume(id) {
        return this.request("POST", `jobs/${encodeURIComponent(id)}/resume`);
    }

    deleteJob(id, { deleteFile = false } = {}) {
        const query = deleteFile ? "?deleteFile=true" : "";
        return this.request("DELETE", `jobs/${encodeURIComponent(id)}${query}`);
    }

    /** Headers for a request of our own (the event stream, file downloads). */
    authHeaders() {
        const token = this.#tokens.get();
        return token ? { Authorization: `Bearer ${token}` } : {};
    }

    /**
     * After a 401: asks for a token. Resolves true when there is a new one to retry with,
     * false when the user cancelled.
     */
    async renewToken() {
        const rejected = this.#tokens.get() !== "";
        const token = await this.#prompt.ask({ rejected });
        return token !== null;
    }

    async request(method, path, body) {
        for (;;) {
            const headers = { Accept: "application/json", ...this.authHeaders() };
            const init = { method, headers, cache: "no-store" };
            if (body !== undefined) {
                headers["Content-Type"] = "application/json";
                init.body = JSON.stringify(body);
            }
            let response;
            try {
                response = await fetch(path, init);
            } catch (error) {
                throw new ApiError(0, "network", "The service cannot be reached. Is it running?");
            }
            if (response.status === 401) {
                if (await this.renewToken()) continue;
                throw new ApiError(401, "unauthorized", "An access token is needed.");
            }
            if (response.status === 204) return null;
            const text = await response.text();
            let json = null;
            try {
                json = text ? JSON.parse(text) : null;
            } catch {
                // Not JSON: a proxy's error page, say. Reported below by status.
            }
            if (!response.ok) {
                const error = json?.error;
                throw new ApiError(
                    response.status,
                    error?.code ?? "http_status",
                    error?.message ?? `The service answered ${response.status} ${response.statusText}.`
                );
            }
            return json;
        }
    }
}
