import ArgumentParser
import Configuration
import Foundation
import Logging
import SluiceAPI
import SluiceCore
import SluiceServer

/// `sluice token create|list|revoke`: the service's named tokens, in its store, so every
/// node of a cluster knows them. The running service sees a change within 5 s.
struct Token: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Make, list and revoke named tokens with a scope (read, add, admin) in the service's store.",
        subcommands: [Create.self, List.self, Revoke.self]
    )

    struct StoreOptions: ParsableArguments {
        @Option(name: .customLong("data"), help: "The service's data directory (env SLUICE_DATA, default ./sluice-data).")
        var dataDirectory: String?

        @Option(help: "A cluster's store, postgres://… (env SLUICE_STORE); wins over --data.")
        var store: String?

        @Option(help: "PEM certificates the store's TLS is trusted with besides the system's (env SLUICE_CA_FILE).")
        var caFile: String?

        @Flag(help: "Print JSON, as the /tokens routes answer.")
        var json = false

        func open() async throws -> OpenedTokenStore {
            var logger = Logger(label: "sluice.token")
            logger.logLevel = .warning
            let location: PostgresLocation?
            do {
                location = try ServeSettings.store.text(store, in: .processEnvironment).map { try PostgresLocation($0) }
            } catch let error as SluiceError {
                throw ValidationError(error.message)
            }
            return try await Token.run {
                try await OpenedTokenStore.open(
                    dataDirectory: ServeSettings.data.text(dataDirectory, in: .processEnvironment) ?? "./sluice-data", store: location,
                    caFile: ServeSettings.caFile.text(caFile, in: .processEnvironment), logger: logger
                )
            }
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make a token; its secret is printed once, and only its digest is stored."
        )
        @Option(help: "The token's name: 1 to 64 letters, digits, '.', '_' or '-'.")
        var name: String
        @Option(help: "read (lists, status, events, metrics), add (read and creating jobs) or admin (everything).")
        var scope: String
        @OptionGroup var options: StoreOptions

        func validate() throws {
            guard TokenScope(rawValue: scope) != nil else { throw ValidationError("--scope must be read, add or admin, not \(scope)") }
            do { try AccessToken.validate(name: name) } catch let error as SluiceError { throw ValidationError(error.message) }
        }

        func run() async throws {
            let scope = TokenScope(rawValue: scope) ?? .read
            let opened = try await options.open()
            defer { opened.close() }
            let (token, secret) = try await Token.run {
                try await TokenRegistry(master: nil, store: opened.store).create(name: name, scope: scope)
            }
            if options.json {
                printLine(JSONValue.object(token.json + [("token", .string(secret))]).text)
            } else {
                printLine(secret)
                printError("token \(token.name) (\(token.scope.rawValue)) made: its secret above is shown this once")
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the tokens: name, scope, when made (never a secret).")
        @OptionGroup var options: StoreOptions

        func run() async throws {
            let opened = try await options.open()
            defer { opened.close() }
            let tokens = try await Token.run { try await opened.store.accessTokens() }
            if options.json {
                printLine(JSONValue.object([("tokens", .array(tokens.map { .object($0.json) }))]).text)
                return
            }
            let width = max(4, tokens.map(\.name.count).max() ?? 0)
            printLine("NAME".padding(toLength: width, withPad: " ", startingAt: 0) + "  SCOPE  CREATED")
            for token in tokens {
                let created = JSONValue(token.createdAt).stringValue ?? ""
                printLine(
                    token.name.padding(toLength: width, withPad: " ", startingAt: 0) + "  "
                        + token.scope.rawValue.padding(toLength: 5, withPad: " ", startingAt: 0) + "  " + created
                )
            }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke a token by name.")
        @Argument(help: "The token's name.")
        var name: String
        @OptionGroup var options: StoreOptions

        func run() async throws {
            let opened = try await options.open()
            defer { opened.close() }
            guard try await Token.run({ try await opened.store.deleteAccessToken(name: name) }) else {
                printError("sluice token revoke: no token is named \(name)")
                throw ExitCode.failure
            }
            printError("token \(name) revoked")
        }
    }

    /// The store's errors as one line, not a trace.
    static func run<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as SluiceError {
            printError("sluice token: \(error.message)")
            throw ExitCode.failure
        }
    }
}
