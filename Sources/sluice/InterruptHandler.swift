import SluiceSystem
import Dispatch

/// Calls `handler` on SIGINT or SIGTERM instead of dying, until cancelled.
final class InterruptHandler {
    private let sources: [any DispatchSourceSignal]

    init(_ handler: @escaping @Sendable () -> Void) {
        sources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler(handler: handler)
            source.resume()
            return source
        }
    }

    func cancel() {
        for source in sources { source.cancel() }
    }
}
