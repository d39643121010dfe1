import Foundation

/// The first key that appears twice in one JSON object of `bytes`, or nil (also for text that
/// is not JSON: the decoder says so). JavaScript, Python and Go take the last of duplicate
/// keys and Foundation's decoder the first: a front end and Sluice would read `{"url":A,
/// "url":B}` differently, so such a body is refused rather than read either way. Keys are
/// compared decoded (`"a"` and `"\u0061"` are the same key).
public enum JSONDuplicateKeys {
    private enum Container {
        case object(keys: Set<String>, expectingKey: Bool)
        case array
    }

    public static func first(in bytes: some Collection<UInt8>) -> String? {
        let bytes = Array(bytes)
        var stack: [Container] = []
        var index = 0
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\""):
                guard let end = stringEnd(bytes, from: index) else { return nil }
                if case .object(var keys, true) = stack.last {
                    guard let key = decode(bytes[index...end]) else { return nil }
                    if keys.contains(key) { return key }
                    keys.insert(key)
                    stack[stack.count - 1] = .object(keys: keys, expectingKey: false)
                }
                index = end
            case UInt8(ascii: "{"):
                stack.append(.object(keys: [], expectingKey: true))
            case UInt8(ascii: "["):
                stack.append(.array)
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                guard !stack.isEmpty else { return nil }
                stack.removeLast()
            case UInt8(ascii: ","):
                if case .object(let keys, _) = stack.last { stack[stack.count - 1] = .object(keys: keys, expectingKey: true) }
            default:
                break
            }
            index += 1
        }
        return nil
    }

    /// The index of the quote that closes the string opening at `start`.
    private static func stringEnd(_ bytes: [UInt8], from start: Int) -> Int? {
        var index = start + 1
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\\"): index += 2
            case UInt8(ascii: "\""): return index
            default: index += 1
            }
        }
        return nil
    }

    private static func decode(_ quoted: ArraySlice<UInt8>) -> String? {
        try? JSONDecoder().decode([String].self, from: Data([UInt8(ascii: "[")] + quoted + [UInt8(ascii: "]")])).first
    }
}
