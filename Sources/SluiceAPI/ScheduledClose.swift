import NIOCore

/// A connection's one deadline: it is closed when the time runs out, unless the deadline is
/// moved (armed again) or cancelled first. On the connection's event loop only.
struct ScheduledClose {
    private var task: Scheduled<Void>?

    /// Closes `context`'s channel after `delay`, in place of any deadline set before.
    mutating func arm(_ context: ChannelHandlerContext, after delay: TimeAmount) {
        cancel()
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        task = context.eventLoop.scheduleTask(in: delay) {
            loopBound.value.close(promise: nil)
        }
    }

    mutating func cancel() {
        task?.cancel()
        task = nil
    }

    var isArmed: Bool { task != nil }
}
