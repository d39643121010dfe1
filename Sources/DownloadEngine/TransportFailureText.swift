import SluiceSystem
import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// What a failed connection tells a person, in plain words: what happened (refused, no such
/// host, timed out, reset, not TLS, TLS expected), the `host:port` it happened with, and the
/// next step where there is one. Never a type name, an errno string or a library's wording:
/// those stay in the error's `cause`, for debug logs. Issue 36: `network error: connection
/// reset (error set): Connection refused) (errno: 111)` was a job's error, the dashboard's
/// and `sluice get`'s.
public enum TransportFailureText {
    /// The sentence for `error`, met while talking to `target` (`host:port`) with a URL of
    /// `scheme` (when known: a plain `http` URL to a TLS port gets the hint of `https`).
    public static func describe(_ error: any Error, target: String, scheme: String? = nil) -> String {
        switch error {
        case let failure as NIOConnectionError:
            if failure.dnsAError != nil || failure.dnsAAAAError != nil, failure.connectionErrors.isEmpty {
                return noSuchHost(String(target.split(separator: ":").dropLast().joined(separator: ":")))
            }
            if let first = failure.connectionErrors.first { return describe(first.error, target: target, scheme: scheme) }
            return "could not connect to \(target)"
        case let unknown as SocketAddressError.UnknownHost:
            return noSuchHost(unknown.host)
        case let io as IOError:
            return describe(errno: io.errnoCode, target: target)
        case let channel as ChannelError:
            switch channel {
            case .connectTimeout: return "\(target) did not answer in time (connect timeout): is the host up?"
            case .eof, .ioOnClosedChannel, .alreadyClosed, .outputClosed, .inputClosed:
                return "\(target) closed the connection"
            default: return "the connection to \(target) failed"
            }
        case let client as HTTPClientError:
            switch client {
            case .connectTimeout: return "\(target) did not answer in time (connect timeout): is the host up?"
            case .readTimeout: return "\(target) sent nothing for too long (read timeout)"
            case .remoteConnectionClosed:
                let hint = scheme == "http" ? " (a server that expects TLS does that: if so, the URL should start with https://)" : ""
                return "\(target) closed the connection before it answered" + hint
            case .tlsHandshakeTimeout: return "the TLS handshake with \(target) took too long"
            case .getConnectionFromPoolTimeout: return "no connection to \(target) could be made in time"
            case .invalidProxyResponse: return "the proxy did not open a tunnel to \(target)"
            case .proxyAuthenticationRequired: return "the proxy asked for credentials to reach \(target)"
            case .cancelled: return "the request to \(target) was cancelled"
            default: return "the connection to \(target) failed"
            }
        case is HTTPParserError:
            return "\(target) answered with something that is not HTTP: if it serves TLS, the URL should start with https://"
        case is NIOSSLError, is BoringSSLError:
            let text = String(describing: error)
            if text.contains("WRONG_VERSION_NUMBER") || text.contains("HTTP_REQUEST") {
                return TLSFailure.notTLS(target)
            }
            return "the TLS connection to \(target) was cut or closed uncleanly"
        case is NIOSSLExtraError:
            return "the certificate of \(target) is not for that name"
        default:
            return "the connection to \(target) failed"
        }
    }

    /// The sentence for a failed socket call's `errno`.
    static func describe(errno code: Int32, target: String) -> String {
        switch code {
        case ECONNREFUSED: return "\(target) refused the connection: nothing is listening there (is the port right? is the server up?)"
        case ECONNRESET: return "\(target) reset the connection"
        case ETIMEDOUT: return "\(target) did not answer in time: is the host up?"
        case EHOSTUNREACH, ENETUNREACH, EHOSTDOWN, ENETDOWN: return "\(target) cannot be reached from here (no route to it)"
        case EPIPE, ENOTCONN, ESHUTDOWN: return "\(target) closed the connection"
        case EADDRNOTAVAIL: return "no local address can reach \(target)"
        case EMFILE, ENFILE: return "the service has too many files open to connect to \(target)"
        default: return "the connection to \(target) failed"
        }
    }

    static func noSuchHost(_ host: String) -> String {
        "no such host: \(host) could not be resolved (check the name, or this machine's DNS)"
    }
}
