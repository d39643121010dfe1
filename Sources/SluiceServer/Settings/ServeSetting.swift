public import ArgumentParser
public import Configuration
import Foundation
import SluiceCore

/// One setting of `sluice serve`, defined once: its name (the flag `--NAME`, and through
/// swift-configuration's key encoding the variable `SLUICE_NAME`), what its value is, how it
/// is read and what it accepts, its help line and its row in docs/settings.md. The flag's
/// help, the check of its value and the documentation are made from this value, so they
/// cannot say different things.
public struct ServeSetting: Sendable {
    /// How a value is read and what it accepts.
    public enum Kind: Sendable {
        /// Any text.
        case text
        /// A whole number in a range.
        case integer(ClosedRange<Int>)
        /// A byte count with an optional K, M or G suffix, at least `minimum`.
        case bytes(minimum: Int64)
        /// A duration such as 90s, 30m, 24h or 7d, in a range of seconds.
        case duration(ClosedRange<Double>)
        /// A switch: the flag, or the variable set to 1.
        case flag
        /// On or off either way: `--NAME` / `--no-NAME`, or the variable set to 1 or 0.
        case onOff
    }

    /// The flag's name without dashes (`max-active`); nil for a setting only the environment
    /// gives (the log level).
    public let name: String?
    /// swift-configuration's key: `sluice.NAME`, encoded for the environment as `SLUICE_NAME`.
    public let key: ConfigKey
    /// The value's name in the documentation (`N`, `DIR`); nil for a switch.
    public let valueName: String?
    public let kind: Kind
    /// One line: what the setting does. The help adds the variable and the default.
    public let summary: String
    /// The default as the help says it, nil when there is none to say.
    public let defaultHelp: String?
    /// The default column of docs/settings.md (Markdown).
    public let defaultDocumented: String

    init(
        _ name: String?, key: String? = nil, value: String? = nil, _ summary: String, default defaultHelp: String? = nil, documented: String
    ) {
        self.init(name, key: key, value: value, .text, summary, default: defaultHelp, documented: documented)
    }

    init(
        _ name: String?, key: String? = nil, value: String? = nil, _ kind: Kind, _ summary: String,
        default defaultHelp: String? = nil, documented: String
    ) {
        self.name = name
        self.key = ConfigKey(["sluice", key ?? name!])
        self.valueName = value
        self.kind = kind
        self.summary = summary
        self.defaultHelp = defaultHelp
        self.defaultDocumented = documented
    }

    /// `--max-active`, or nil.
    public var flag: String? { name.map { "--\($0)" } }

    /// The environment variable swift-configuration reads for `key`: each component upper
    /// case, anything not a letter or digit an underscore, joined with underscores
    /// (`sluice.max-active` → `SLUICE_MAX_ACTIVE`). `SettingsTableTests` checks it against
    /// the library's own reading.
    public var environmentVariable: String {
        key.components.map { component in
            String(component.uppercased().map { $0.isLetter || $0.isNumber ? $0 : "_" })
        }.joined(separator: "_")
    }

    /// The help line `sluice serve --help` shows, one paragraph (the parser wraps it).
    public var help: String {
        var environment = "env \(environmentVariable)"
        switch kind {
        case .flag: environment += "=1"
        case .onOff: environment += "=1 or 0"
        default: break
        }
        let ending = defaultHelp.map { "; default \($0)" } ?? ""
        return "\(summary) (\(environment)\(ending))."
    }

    /// The help line with the value's name, for ArgumentParser.
    public var argumentHelp: ArgumentHelp {
        ArgumentHelp(help, valueName: valueName?.lowercased())
    }

    /// This setting's row of the table in docs/settings.md.
    public var documentationRow: String {
        var flags = flag.map { "`\($0)\(valueName.map { " \($0)" } ?? "")`" } ?? "(\(summary.lowercased()))"
        if case .onOff = kind, let name { flags += ", `--no-\(name)`" }
        var environment = "`\(environmentVariable)`"
        switch kind {
        case .flag: environment = "`\(environmentVariable)=1`"
        case .onOff: environment = "`\(environmentVariable)=1` or `0`"
        default: break
        }
        return "| \(flags) | \(environment) | \(defaultDocumented) |"
    }

    // MARK: Reading

    /// The flag's value, else the environment's (through swift-configuration); an empty
    /// variable counts as unset.
    public func text(_ flag: String?, in environment: ConfigReader) -> String? {
        source(flag, in: environment)?.text
    }

    /// The value and what to call it in a refusal: the flag, or the flag and the variable
    /// when the environment gave it (`--lease (SLUICE_LEASE) must be ...`).
    func source(_ flag: String?, in environment: ConfigReader) -> (text: String, named: String)? {
        if let flag { return (flag, named) }
        guard let value = environment.string(forKey: key, isSecret: true), !value.isEmpty else { return nil }
        return (value, self.flag.map { "\($0) (\(environmentVariable))" } ?? environmentVariable)
    }

    /// Whether the variable is set to the empty string (for a secret, a mistake).
    public func isSetButEmpty(in environment: ConfigReader) -> Bool {
        environment.string(forKey: key, isSecret: true) == ""
    }

    /// An integer setting's value, checked against its range.
    public func integer(_ flag: Int?, in environment: ConfigReader, default value: Int) throws(SettingError) -> Int {
        guard case .integer(let range) = kind else { preconditionFailure("\(name ?? "") is not an integer") }
        var number = value
        var named = named
        if let flag {
            number = flag
        } else if let (text, source) = source(nil, in: environment) {
            guard let parsed = Int(text) else { throw SettingError("\(source) must be a whole number, not \(text)") }
            (number, named) = (parsed, source)
        }
        guard range.contains(number) else {
            throw SettingError("\(named) must be between \(range.lowerBound) and \(range.upperBound), not \(number)")
        }
        return number
    }

    /// A byte-count setting's value, if given.
    public func bytes(_ flag: String?, in environment: ConfigReader) throws(SettingError) -> Int64? {
        guard case .bytes(let minimum) = kind else { preconditionFailure("\(name ?? "") is not a byte count") }
        guard let (text, named) = source(flag, in: environment) else { return nil }
        guard let bytes = ByteSize.parse(text, limit: .max), bytes >= minimum else {
            throw SettingError("\(named) must be a byte count of at least \(minimum) with an optional K, M or G suffix, not \(text)")
        }
        return bytes
    }

    /// A duration setting's value in seconds, if given.
    public func seconds(_ flag: String?, in environment: ConfigReader) throws(SettingError) -> Double? {
        guard case .duration(let range) = kind else { preconditionFailure("\(name ?? "") is not a duration") }
        guard let (text, named) = source(flag, in: environment) else { return nil }
        guard let seconds = DurationText.seconds(text), range.contains(seconds) else {
            throw SettingError(
                "\(named) must be a duration from \(Self.duration(range.lowerBound)) to \(Self.duration(range.upperBound)) (a number with s, m, h or d), not \(text)"
            )
        }
        return seconds
    }

    /// A switch: the flag, else the variable set to 1 (true, yes, on).
    public func isOn(_ flag: Bool, in environment: ConfigReader) -> Bool {
        flag || text(nil, in: environment).map { ["1", "true", "yes", "on"].contains($0.lowercased()) } == true
    }

    /// On or off when set either way, nil when not.
    public func onOff(_ flag: Bool?, in environment: ConfigReader) throws(SettingError) -> Bool? {
        if let flag { return flag }
        guard let value = text(nil, in: environment)?.lowercased() else { return nil }
        if ["1", "true", "yes", "on"].contains(value) { return true }
        if ["0", "false", "no", "off"].contains(value) { return false }
        throw SettingError("\(environmentVariable) must be 1 or 0, not \(value)")
    }

    /// The start of a refusal: the flag (or the variable, for a setting without one).
    var named: String { flag ?? environmentVariable }

    static func duration(_ seconds: Double) -> String {
        if seconds >= 86400, seconds.truncatingRemainder(dividingBy: 86400) == 0 { return "\(Int(seconds / 86400))d" }
        if seconds >= 3600, seconds.truncatingRemainder(dividingBy: 3600) == 0 { return "\(Int(seconds / 3600))h" }
        if seconds >= 60, seconds.truncatingRemainder(dividingBy: 60) == 0 { return "\(Int(seconds / 60))m" }
        return "\(Int(seconds))s"
    }
}

/// A setting's value refused, in words for the terminal.
public struct SettingError: Error, CustomStringConvertible {
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}

extension ConfigReader {
    /// The environment of this process, as the settings read it.
    public static var processEnvironment: ConfigReader {
        ConfigReader(provider: EnvironmentVariablesProvider())
    }
}
