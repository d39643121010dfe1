// A job's integrity and sources in its details (CONTRACT.md §8): the digest it expects and
// where that came from, whether the file had it, the signature's key, and what each source
// (the URL, then the mirrors) brought.

import { formatBytes } from "./format.js";

const SOURCES = {
    checksum: "given on create",
    checksumUrl: "the checksum file",
    "repr-digest": "the server's Repr-Digest",
    digest: "the server's Digest",
    "content-md5": "the server's Content-MD5",
    "x-goog-hash": "the server's x-goog-hash",
    "x-amz-checksum-sha256": "the server's x-amz-checksum-sha256",
};

/** One line of text per fact, into `list` (a <ul>). */
export function renderIntegrity(list, job) {
    const integrity = job.integrity ?? {};
    const lines = [];
    const expected = integrity.expected;
    if (expected) {
        const value = expected.value.length > 24 ? `${expected.value.slice(0, 24)}…` : expected.value;
        // The whole digest in the tooltip.
        lines.push([`${expected.algorithm.toUpperCase()} ${value}, from ${SOURCES[expected.source] ?? expected.source}`, null, expected.value]);
    } else {
        lines.push(["No digest expected: the file is placed as it arrives.", null]);
    }
    if (integrity.verified === true) lines.push(["The file has it: verified.", "ok"]);
    else if (integrity.verified === false) lines.push(["The file did not have it.", "failed"]);
    const signature = integrity.signature;
    if (signature) {
        const format = signature.format === "openpgp" ? "OpenPGP" : "minisign";
        lines.push(
            signature.verified
                ? [`${format} signature verified by key ${signature.key}.`, "ok"]
                : [`${format} signature: no trusted key verifies it.`, "failed"],
        );
    }
    list.replaceChildren(
        ...lines.map(([text, state, title]) => {
            const item = document.createElement("li");
            item.textContent = text;
            if (state) item.dataset.state = state;
            if (title) item.title = title;
            return item;
        }),
    );
}

/** Each source with its bytes, failures and state, into `list` (a <ul>). */
export function renderSources(list, job) {
    const sources = job.sources ?? [];
    list.dataset.count = String(sources.length);
    list.replaceChildren(
        ...sources.map((source, index) => {
            const item = document.createElement("li");
            item.dataset.state = source.state;
            const role = index === 0 ? "URL" : `Mirror ${index}`;
            const failures = source.failures ? `, ${source.failures} failure${source.failures === 1 ? "" : "s"}` : "";
            item.textContent = `${role}: ${formatBytes(source.bytes)}${failures}, ${source.state} — ${source.url}`;
            return item;
        }),
    );
}
