import Foundation
import Testing

@testable import RoostStore

/// The file store on a folder several machines share (`--blob-store directory` with N instances).
@Suite("Blob files on a shared folder")
struct SharedBlobFolderTests {
    @Test func anotherMachinesUploadIsAbandonedOnlyOnceIdleForAnHour() throws {
        let folder = NSTemporaryDirectory() + "roost-shared-blobs-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let storage = try FileBlobStorage(dataDirectory: folder)
        let tmp = storage.root + "/tmp/"
        let otherMachine = FileBlobStorage.machineTag == "00000000" ? "00000001" : "00000000"
        // No live process has pid 2147483647 (Linux's pid_max is at most 2^22).
        let names = [
            "busy": "2147483647-1-1-\(otherMachine)",
            "idle": "2147483647-2-2-\(otherMachine)",
            "deadHere": "2147483647-3-3-\(FileBlobStorage.machineTag)",
            "deadOldName": "2147483647-4-4",
        ]
        for name in names.values { FileManager.default.createFile(atPath: tmp + name, contents: Data([1])) }
        let hoursAgo = Date().addingTimeInterval(-2 * FileBlobStorage.foreignUploadIdleLimit)
        try FileManager.default.setAttributes(
            [.modificationDate: hoursAgo], ofItemAtPath: tmp + names["idle"]!)
        let (ours, descriptor) = try storage.makeTemporaryFile()
        close(descriptor)
        #expect(ours.hasSuffix("-" + FileBlobStorage.machineTag))

        let abandoned = Set(try storage.abandonedTemporaryFiles())
        #expect(
            abandoned == Set([names["idle"]!, names["deadHere"]!, names["deadOldName"]!].map { tmp + $0 }))
    }
}
