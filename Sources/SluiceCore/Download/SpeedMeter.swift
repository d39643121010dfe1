/// Download speed over a moving window, fed with (time, bytes-done) samples.
/// Time is passed in, never read, so tests drive it directly.
public struct SpeedMeter: Sendable {
    public let window: Double
    private var samples: [(time: Double, bytes: Int64)] = []

    public init(window: Double = 5) {
        self.window = window
    }

    /// Adds a sample: `bytes` is the running total at `time` (seconds, any origin).
    public mutating func record(bytes: Int64, at time: Double) {
        if let last = samples.last, bytes < last.bytes {
            // The download restarted from zero: old samples no longer mean anything.
            samples.removeAll()
        }
        samples.append((time, bytes))
        while let first = samples.first, time - first.time > window, samples.count > 2 {
            samples.removeFirst()
        }
    }

    /// Bytes per second over the window, 0 until two samples span some time.
    public var bytesPerSecond: Double {
        guard let first = samples.first, let last = samples.last, last.time > first.time else { return 0 }
        return Double(last.bytes - first.bytes) / (last.time - first.time)
    }

    /// Seconds left for `remaining` bytes at the current speed; nil when unknown.
    public func eta(remaining: Int64?) -> Double? {
        guard let remaining else { return nil }
        if remaining <= 0 { return 0 }
        let speed = bytesPerSecond
        return speed > 0 ? Double(remaining) / speed : nil
    }
}
