extension DashboardScripts {
    /// What an object view shows beside its JSON: references as links to the objects they name,
    /// and blob members, downloadable and (common image types) previewed. A blob is fetched with
    /// the token in its header, then shown from a `blob:` address (the CSP allows nothing else).
    static let object = #"""
        "use strict";
        window.RD = window.RD || {};

        RD.object = {
          referencePattern: /^\/ff\/resources\/([A-Za-z][A-Za-z0-9_]{0,63})\/([A-Za-z0-9_-]{1,64})$/,
          // A blob's bytes are read (with the token) only from this server's own blob addresses.
          blobPattern: /^\/ff\/resources\/[A-Za-z][A-Za-z0-9_]{0,63}\/[A-Za-z0-9_-]{1,64}\/[A-Za-z0-9_]{1,64}$/,
          previewTypes: ["image/png", "image/jpeg", "image/gif", "image/webp"],

          // [{path, collection, guid}] and [{path, blob}] found in the object, 200 at most.
          parts(object) {
            const references = [], blobs = [];
            const walk = (value, path, depth) => {
              if (depth > 8 || references.length + blobs.length >= 200 || !value || typeof value !== "object") return;
              if (!Array.isArray(value) && typeof value.ffUrl === "string" && path !== "") {
                const match = RD.object.referencePattern.exec(value.ffUrl);
                if (match) references.push({path, collection: match[1], guid: match[2]});
              }
              if (!Array.isArray(value) && value.blob && typeof value.blob.url === "string" && path !== "" &&
                  RD.object.blobPattern.test(value.blob.url)) {
                blobs.push({path, blob: value.blob});
                return;
              }
              for (const [key, child] of Object.entries(value)) walk(child, path ? path + "." + key : key, depth + 1);
            };
            walk(object, "", 0);
            return {references, blobs};
          },

          view(object) {
            const {el, link} = RD.ui;
            const {references, blobs} = RD.object.parts(object);
            const box = el("div");
            if (references.length) {
              box.append(el("h2", {}, "References"), el("ul", {dataset: {test: "references"}},
                ...references.map((ref) => el("li", {}, el("span", {className: "muted"}, ref.path + " → "),
                  link(RD.data.objectPath(ref.collection, ref.guid), ref.collection + "/" + ref.guid)))));
            }
            if (blobs.length) {
              box.append(el("h2", {}, "Files"), el("ul", {dataset: {test: "blobs"}},
                ...blobs.map((item) => RD.object.blobItem(item))));
            }
            return box;
          },

          blobItem(item) {
            const {el} = RD.ui;
            const blob = item.blob;
            const line = el("li", {dataset: {member: item.path}}, item.path + " · " + String(blob.contentType || "") +
              " · " + String(blob.size) + " bytes ");
            const fetchBytes = async () => {
              const response = await fetch(blob.url, {headers: {"Authorization": "Bearer " + RD.api.token()},
                credentials: "omit", cache: "no-store"});
              if (!response.ok) throw new Error("HTTP " + response.status);
              return URL.createObjectURL(await response.blob());
            };
            line.append(RD.ui.button("Download", async () => {
              try {
                const address = await fetchBytes();
                const save = el("a", {href: address, download: item.path.replace(/[^A-Za-z0-9_.-]/g, "_")});
                save.click();
                setTimeout(() => URL.revokeObjectURL(address), 60000);
              } catch (error) { line.append(RD.ui.message("error", "The file cannot be read: " + error.message)); }
            }, {className: "plain", dataset: {test: "download"}}));
            if (RD.object.previewTypes.includes(blob.contentType)) {
              fetchBytes().then((address) => {
                line.append(el("div", {}, el("img", {src: address, alt: item.path, className: "preview",
                  dataset: {test: "preview"}})));
              }, (error) => line.append(RD.ui.message("error", "No preview: " + error.message)));
            }
            return line;
          },
        };

        """#
}
