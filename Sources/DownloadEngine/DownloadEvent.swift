public import SluiceCore

/// What a running download reports, in order, on its one stream (`Download.events`).
public enum DownloadEvent: Sendable {
    /// Bytes, speed and phase now (every `progressInterval`, and at each phase change
    /// near the end).
    case progress(DownloadProgress)
    /// A checkpoint covering this many bytes was saved after an `fsync`.
    case checkpointed(bytes: Int64)
    /// A request failed and is tried again after `delay`: `reason` in plain words, the
    /// `failures` in a row so far.
    case retrying(reason: String, delay: Duration, failures: Int)
}
