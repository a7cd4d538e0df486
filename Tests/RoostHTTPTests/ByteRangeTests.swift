import Testing

@testable import RoostHTTP

@Suite("Range header")
struct ByteRangeTests {
    @Test(
        "ranges resolve against the size, saturating and clamping every number a client sends",
        arguments: [
            ("bytes=0-9223372036854775807", 10, ByteRange.part(0..<10)),
            ("bytes=0-99999999999999999999999999", 10, .part(0..<10)),
            ("bytes=9223372036854775807-", 10, .unsatisfiable),
            ("bytes=99999999999999999999999-99999999999999999999999", 10, .unsatisfiable),
            ("bytes=-9223372036854775807", 10, .part(0..<10)),
            ("bytes=-99999999999999999999999", 10, .part(0..<10)),
            ("bytes=-0", 10, .unsatisfiable),
            ("bytes=-3", 10, .part(7..<10)),
            ("bytes=-3", 0, .unsatisfiable),
            ("bytes=0-0", 10, .part(0..<1)),
            ("bytes=0-", 0, .unsatisfiable),
            ("bytes=9-", 10, .part(9..<10)),
            ("bytes=10-", 10, .unsatisfiable),
            ("bytes=2-5", 10, .part(2..<6)),
            ("bytes=0002-0005", 10, .part(2..<6)),
            ("BYTES= 2-5 ", 10, .part(2..<6)),
            ("bytes=5-2", 10, .whole),
            ("bytes=+2-5", 10, .whole),
            ("bytes=2-+5", 10, .whole),
            ("bytes=-+5", 10, .whole),
            ("bytes=--5", 10, .whole),
            ("bytes=2 -5", 10, .whole),
            ("bytes=0-1,3-4", 10, .whole),
            ("bytes=", 10, .whole),
            ("bytes=-", 10, .whole),
            ("items=0-1", 10, .whole),
            ("bytes=١-٢", 10, .whole),
        ])
    func resolves(header: String, size: Int, expected: ByteRange) {
        #expect(ByteRange(header: header, size: size) == expected)
    }
}
