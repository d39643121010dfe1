// The jobs API (docs/api.md) over fetch: JSON in and out, the bearer token when there is
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

    listJobs({ limit = 1000, after, offset, state } = {}) {
        const query = new URLSearchParams({ limit: String(limit) });
        if (after) query.set("after", after);
        if (offset) query.set("offset", String(offset));
        if (state) query.set("state", state);
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

    editJob(id, changes) {
        return this.request("PATCH", `jobs/${encodeURIComponent(id)}`, changes);
    }

    segments(id) {
        return this.request("GET", `jobs/${encodeURIComponent(id)}/segments`);
    }

    deliveries(id) {
        return this.request("GET", `jobs/${encodeURIComponent(id)}/deliveries`);
    }

    getQueue() {
        return this.request("GET", "queue");
    }

    updateQueue(changes) {
        return this.request("PATCH", "queue", changes);
    }

    getSchedule() {
        return this.request("GET", "schedule");
    }

    putSchedule(schedule) {
        return this.request("PUT", "schedule", schedule);
    }

    /** Pauses every job (or those in `state`, e.g. "queued,running"). */
    pauseAll(state) {
        return this.request("POST", state ? `jobs/pause?state=${encodeURIComponent(state)}` : "jobs/pause");
    }

    resumeAll(state) {
        return this.request("POST", state ? `jobs/resume?state=${encodeURIComponent(state)}` : "jobs/resume");
    }

    /** Deletes every job in `state` (required: the service refuses to wipe everything). */
    deleteAll(state, { deleteFile = false } = {}) {
        const query = new URLSearchParams({ state });
        if (deleteFile) query.set("deleteFile", "true");
        return this.request("DELETE", `jobs?${query}`);
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
                const failure = new ApiError(
                    response.status,
                    error?.code ?? "http_status",
                    error?.message ?? `The service answered ${response.status} ${response.statusText}.`
                );
                failure.field = error?.field ?? null;
                throw failure;
            }
            return json;
        }
    }
}
