extension Response {
    /// The response as it goes on the wire: status line, headers (with `Content-Length`, `Date`,
    /// `Connection: close` when the connection ends, and the HSTS line over TLS), then the body.
    /// A file body is sent after these bytes by the connection.
    func wireBytes(omitBody: Bool, keepAlive: Bool, date: String, strictTransportSecurityLine: String?)
        -> [UInt8]
    {
        var head = "HTTP/1.1 \(status) \(Response.reasonPhrase(for: status))\r\n"
        for field in headers where !field.name.caseInsensitiveEquals("content-length") {
            // Appended piece by piece: an interpolated line would be a temporary string per field.
            head += field.name
            head += ": "
            head += field.value
            head += "\r\n"
        }
        if status != 204 && status != 304 && !(100..<200).contains(status) && stream == nil {
            head += "Content-Length: \(file?.length ?? body.count)\r\n"
        }
        head += "Date: \(date)\r\n"
        if !keepAlive && !headers.contains("Connection") { head += "Connection: close\r\n" }
        if let strictTransportSecurityLine { head += strictTransportSecurityLine }
        head += "\r\n"
        var bytes = Array(head.utf8)
        if !omitBody && status != 204 && status != 304 { bytes.append(contentsOf: body) }
        return bytes
    }
}
