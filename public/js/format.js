// Human-readable numbers for the job list. Binary units (KiB, MiB, ...), like the sizes
// Sluice accepts (`/testdata/20M` is 20 MiB) and like `sluice get` prints.

const UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];

/** `1536` → `"1.5 KiB"`; `null` → `"?"` (size not known yet). */
export function formatBytes(bytes) {
    if (bytes == null || !Number.isFinite(bytes)) return "?";
    let value = Math.max(0, bytes);
    let unit = 0;
    while (value >= 1024 && unit < UNITS.length - 1) {
        value /= 1024;
        unit += 1;
    }
    if (unit === 0) return `${value} B`;
    const digits = value < 10 ? 2 : value < 100 ? 1 : 0;
    return `${value.toFixed(digits)} ${UNITS[unit]}`;
}

/** Bytes per second → `"2.00 MiB/s"`. */
export function formatSpeed(bytesPerSecond) {
    if (bytesPerSecond == null || !Number.isFinite(bytesPerSecond)) return "";
    return `${formatBytes(bytesPerSecond)}/s`;
}

/** Seconds left → `"45 s"`, `"3 min 20 s"`, `"2 h 5 min"`, `"3 d 4 h"`; unknown → `""`. */
export function formatETA(seconds) {
    if (seconds == null || !Number.isFinite(seconds) || seconds < 0) return "";
    const s = Math.ceil(seconds);
    if (s < 60) return `${s} s`;
    const minutes = Math.floor(s / 60);
    if (minutes < 60) return `${minutes} min ${s % 60} s`;
    const hours = Math.floor(minutes / 60);
    if (hours < 24) return `${hours} h ${minutes % 60} min`;
    return `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

/**
 * Whole percent done, rounded down so that 100 % means the last byte is on disk;
 * `null` when the size is unknown.
 */
export function percentDone(job) {
    if (job.state === "completed") return 100;
    if (!job.bytesTotal) return null;
    return Math.min(100, Math.floor((job.bytesDone / job.bytesTotal) * 100));
}

/** `/files/` URL of a finished file: `job.path` with each segment percent-encoded. */
export function fileURL(path) {
    return "files/" + path.split("/").map(encodeURIComponent).join("/");
}
