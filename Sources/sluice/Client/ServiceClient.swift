import ArgumentParser
import AsyncHTTPClient
import DownloadEngine
import SluiceTLS
import Foundation
import NIOCore
import NIOHTTP1
import SluiceCore

/// The service's REST API from the command line. An answer that is an error prints the
/// service's message and exits 1; a service that cannot be reached prints one line naming
/// its host and port and exits 3 (as `get` does for the network).
struct ServiceClient {
    let base: String
    let token: String?
    let http: HTTPClient

    /// Exit codes of the client commands, beside ArgumentParser's 64 for usage.
    enum Exit {
        static let serviceError: Int32 = 1
        static let unreachable: Int32 = 3
        /// `wait`: a job failed, or was deleted before it completed.
        static let jobFailed: Int32 = 8
    }

    init(base: String, token: String?, cacert: String?) throws {
        self.base = base
        self.token = token
        var configuration = HTTPClient.Configuration()
        do {
            let trust = try TLSTrust.make(caFile: cacert, environment: ProcessInfo.processInfo.environment, caField: "cacert")
            configuration.tlsConfiguration = trust.clientConfiguration(insecure: false)
        } catch let error as SluiceError {
            throw ValidationError(error.message)
        }
        // A local service: a proxy set for downloads must not carry these requests.
        configuration.proxy = nil
        http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    func shutdown() async { try? await http.shutdown() }

    /// One request; the body of a 2xx answer.
    func send(_ method: HTTPMethod, _ path: String, body: JSONValue? = nil) async throws -> Data {
        let (status, data) = try await exchange(method, path, body: body)
        guard (200..<300).contains(status) else { throw Self.failure(status: status, body: data) }
        return data
    }

    func exchange(_ method: HTTPMethod, _ path: String, body: JSONValue? = nil) async throws -> (status: Int, body: Data) {
        var request = HTTPClientRequest(url: base + path)
        request.method = method
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: body.text))
        }
        let response: HTTPClientResponse
        do {
            response = try await http.execute(request, timeout: .seconds(60))
        } catch {
            throw unreachable(error)
        }
        // Past the head: the service is there, whatever goes wrong now.
        do {
            let collected = try await response.body.collect(upTo: 64 << 20)
            return (Int(response.status.code), Data(collected.readableBytesView))
        } catch {
            throw ClientFailure(message: "the service's answer could not be read (\(type(of: error)))", code: Exit.serviceError)
        }
    }

    /// An event stream's lines, as they come (`GET /events`).
    func lines(_ path: String) async throws -> AsyncThrowingStream<String, any Error> {
        var request = HTTPClientRequest(url: base + path)
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        request.headers.add(name: "Accept", value: "text/event-stream")
        let response: HTTPClientResponse
        do {
            response = try await http.execute(request, timeout: .hours(24 * 365))
        } catch {
            throw unreachable(error)
        }
        guard response.status == .ok else {
            throw Self.failure(
                status: Int(response.status.code), body: Data(try await response.body.collect(upTo: 1 << 20).readableBytesView))
        }
        return AsyncThrowingStream { continuation in
            let task = Task {
                var pending = Data()
                do {
                    for try await chunk in response.body {
                        pending.append(contentsOf: chunk.readableBytesView)
                        while let newline = pending.firstIndex(of: 10) {
                            let line = pending[pending.startIndex..<newline]
                            pending.removeSubrange(pending.startIndex...newline)
                            continuation.yield(String(decoding: line, as: UTF8.self).trimmingCharacters(in: ["\r"]))
                        }
                        // A line is bounded: a stream of one endless line is not buffered.
                        if pending.count > 16 << 20 { throw ExitCode(Exit.serviceError) }
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// The service's own words for an error answer.
    static func failure(status: Int, body: Data) -> ClientFailure {
        let message = (try? JSONDecoder().decode(JSONValue.self, from: body))?["error"]?["message"]?.stringValue
        var text = message.map { "\($0) (\(status))" } ?? "the service answered \(status)"
        if status == 401 {
            // Where the client looks for a token, for one who gave none or a wrong one.
            text += "; give the service's token with SLUICE_TOKEN=TOKEN or --token-file FILE"
        }
        return ClientFailure(message: text, code: Exit.serviceError)
    }

    func unreachable(_ error: any Error) -> ClientFailure {
        let components = URLComponents(string: base)
        let host = components?.host ?? base
        let port = components?.port ?? (components?.scheme == "https" ? 443 : 80)
        let reason: String
        let target = (host.contains(":") ? "[\(host)]" : host) + ":\(port)"
        if let client = error as? HTTPClientError, client == .deadlineExceeded || client == .readTimeout {
            reason = "\(target) did not answer in time"
        } else {
            reason = TransportFailureText.describe(error, target: target)
        }
        return ClientFailure(
            message: "cannot reach the service: \(reason). Is `sluice serve` running? Another address: --server URL or SLUICE_URL",
            code: Exit.unreachable)
    }

    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()

    static func job(_ data: Data) throws -> JobSnapshot { try decoder.decode(JobSnapshot.self, from: data) }

    static func jobs(_ data: Data) throws -> [JobSnapshot] {
        struct List: Decodable { let jobs: [JobSnapshot] }
        return try decoder.decode(List.self, from: data).jobs
    }
}

/// An error a client command prints on one line, then exits with `code`.
struct ClientFailure: Error {
    var message: String
    let code: Int32
}

extension AsyncParsableCommand {
    /// Runs `body` with a client, printing a failure as `sluice: MESSAGE` on standard error.
    func withService(_ options: ClientOptions, _ body: (ServiceClient) async throws -> Void) async throws {
        let client = try options.client()
        do {
            try await body(client)
            await client.shutdown()
        } catch let failure as ClientFailure {
            await client.shutdown()
            printError("sluice: \(failure.message)")
            throw ExitCode(failure.code)
        } catch {
            await client.shutdown()
            throw error
        }
    }
}
