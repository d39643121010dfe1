/// aria2's GID: 16 lowercase hexadecimal digits. A Sluice job id is a 64-bit number in 13
/// base-36 digits, so each job's GID is the same number in hexadecimal: stable, and turned
/// back into the job id without a table.
public enum Aria2GID {
    public static func of(jobID: String) -> String {
        let value = UInt64(jobID, radix: 36) ?? fallback(jobID)
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// The job id a GID names; nil for anything that is not 16 hexadecimal digits (aria2
    /// takes a unique prefix too; clients send the whole GID they were given).
    public static func jobID(of gid: String) -> String? {
        // `UInt64(_:radix:)` takes a sign too: only the digits themselves are a GID.
        guard gid.utf8.count == 16,
            gid.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) || (0x41...0x46).contains($0) }),
            let value = UInt64(gid, radix: 16)
        else { return nil }
        let text = String(value, radix: 36)
        return String(repeating: "0", count: max(0, 13 - text.count)) + text
    }

    /// Ids that are not base-36 numbers (none are made so) get a hash: a GID still, though
    /// not one that leads back.
    private static func fallback(_ id: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in id.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        return hash
    }
}
