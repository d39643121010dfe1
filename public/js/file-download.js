// Downloading a finished file when the service has a token. A plain link cannot send
// the Authorization header, and /files/ takes no query token, so the file is fetched
// with the header and handed to the browser as a blob. This holds the whole file in
// memory: fine for what a dashboard click is for, not for huge files (use curl -H).

import { ApiError } from "./api.js";

export async function downloadWithToken(url, filename, headers) {
    const response = await fetch(url, { headers, cache: "no-store" });
    if (!response.ok) {
        throw new ApiError(response.status, "http_status", `The file could not be downloaded (${response.status}).`);
    }
    const blobURL = URL.createObjectURL(await response.blob());
    const link = document.createElement("a");
    link.href = blobURL;
    link.download = filename || "download";
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(blobURL), 60_000);
}
