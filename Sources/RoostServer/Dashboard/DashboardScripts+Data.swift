extension DashboardScripts {
    /// Collections, the objects browser (cursor pages, a filter in Roost's query language) and
    /// one object: formatted JSON and metadata, edited with `If-Match`, deleted.
    static let data = #"""
        "use strict";
        window.RD = window.RD || {};
        const metadataFields = ["guid", "ffUrl", "createdBy", "createdAt", "updatedBy", "updatedAt", "version"];

        RD.data = {
          pageSize: 50,

          async collections(search) {
            const show = RD.ui.shower();
            const exact = search.get("exact") === "1";
            const answer = await RD.api.call("GET", "/ff/admin/collections" + RD.api.query({exact: exact ? 1 : ""}));
            if (answer.status !== 200) return show(RD.ui.errorMessage(answer));
            const {el, link} = RD.ui;
            const rows = answer.json.items.map((item) => el("tr", {dataset: {collection: item.name}},
              el("td", {}, link("/_/collections/" + encodeURIComponent(item.name), item.name)),
              el("td", {dataset: {test: "count"}}, item.exact ? item.count.toLocaleString("en") :
                "more than " + (item.count - 1).toLocaleString("en"))));
            show(el("h1", {}, "Collections"),
              rows.length ? RD.ui.table(["Collection", "Objects"], rows, "collections") :
                el("p", {className: "muted"}, "No collection holds an object yet."),
              answer.json.truncated ? el("p", {className: "muted"}, "Only the first " + rows.length +
                " collections are listed.") : null,
              exact ? null : el("p", {}, link("/_/?exact=1", "Count exactly", {dataset: {test: "exact"}}),
                el("span", {className: "muted"}, " (counts stop at " +
                  answer.json.countLimit.toLocaleString("en") + " unless asked; exact counts read every object)")));
          },

          async objects(name, search) {
            const show = RD.ui.shower();
            const {el, link} = RD.ui;
            const filter = search.get("filter") || "";
            const input = el("input", {type: "search", name: "filter", value: filter,
              placeholder: "a Roost query, such as  age gt 30 and name matches '^A'", dataset: {test: "filter"}});
            const form = el("form", {className: "row", onsubmit(event) {
              event.preventDefault();
              RD.app.go(RD.data.browsePath(name, {filter: input.value.trim()}));
            }}, input, el("button", {type: "submit"}, "Filter"));
            const title = el("h1", {}, link("/_/", "Collections"), " / ", name);
            show(title, form, el("p", {className: "muted"}, "Loading…"));
            const answer = await RD.api.call("GET", "/ff/admin/collections/" + encodeURIComponent(name) +
              "/objects" + RD.api.query({limit: RD.data.pageSize, filter, after: search.get("after"),
                before: search.get("before")}));
            if (answer.status !== 200) return show(title, form, RD.ui.errorMessage(answer, "query-error"));
            const page = answer.json;
            const rows = page.items.map((object) => el("tr", {dataset: {guid: object.guid}},
              el("td", {}, link(RD.data.objectPath(name, object.guid), object.guid)),
              el("td", {}, RD.ui.time(object.updatedAt)),
              el("td", {}, String(object.version)),
              el("td", {className: "preview"}, RD.data.preview(object))));
            const previous = RD.ui.button("Previous", () => RD.app.go(RD.data.browsePath(name,
              {filter, before: page.previous})), {className: "plain", disabled: !page.previous,
              dataset: {test: "previous"}});
            const next = RD.ui.button("Next", () => RD.app.go(RD.data.browsePath(name,
              {filter, after: page.next})), {className: "plain", disabled: !page.next, dataset: {test: "next"}});
            show(title, form,
              rows.length ? RD.ui.table(["guid", "updated", "version", "object"], rows, "objects") :
                el("p", {className: "muted", dataset: {test: "empty"}}, "No object on this page."),
              el("div", {className: "row"}, previous, next), RD.data.creator(name));
          },

          // "New object": a JSON editor whose text is POSTed to the collection.
          creator(name) {
            const {el} = RD.ui;
            const status = el("div");
            const editor = el("textarea", {spellcheck: false, hidden: true, dataset: {test: "new-editor"}});
            editor.value = "{\n  \n}";
            const create = RD.ui.button("Create", async () => {
              let body;
              try { body = JSON.parse(editor.value); } catch (error) {
                return status.replaceChildren(RD.ui.message("error", "This is not JSON: " + error.message, "error"));
              }
              const answer = await RD.api.call("POST", RD.api.collectionPath(name), {body});
              if (answer.status === 201) return RD.app.go(RD.data.objectPath(name, answer.json.guid));
              status.replaceChildren(RD.ui.errorMessage(answer));
            }, {hidden: true, dataset: {test: "create"}});
            const open = RD.ui.button("New object", () => {
              editor.hidden = false; create.hidden = false; open.hidden = true; editor.focus();
            }, {className: "plain", dataset: {test: "new"}});
            return el("div", {}, el("div", {className: "row"}, open, create), status, editor);
          },

          browsePath(name, parameters) {
            return "/_/collections/" + encodeURIComponent(name) + RD.api.query(parameters);
          },
          objectPath(name, guid) {
            return "/_/collections/" + encodeURIComponent(name) + "/" + encodeURIComponent(guid);
          },

          // The object without its metadata, on one line, for a table cell.
          preview(object) {
            const text = JSON.stringify(RD.data.withoutMetadata(object));
            return text.length > 160 ? text.slice(0, 160) + "…" : text;
          },
          withoutMetadata(object) {
            const copy = {};
            for (const [key, value] of Object.entries(object)) if (!metadataFields.includes(key)) copy[key] = value;
            return copy;
          },

          async object(name, guid, search) {
            const show = RD.ui.shower();
            const {el, link} = RD.ui;
            const title = el("h1", {}, link("/_/", "Collections"), " / ",
              link(RD.data.browsePath(name, {}), name), " / ", guid);
            const answer = await RD.api.call("GET", RD.api.objectPath(name, guid));
            if (answer.status !== 200) return show(title, RD.ui.errorMessage(answer));
            const object = answer.json;
            const meta = el("dl", {className: "meta", dataset: {test: "metadata"}});
            for (const field of metadataFields) {
              const value = object[field];
              const shown = field.endsWith("At") ? RD.ui.time(value) : value === undefined || value === null ? "" : String(value);
              meta.append(el("dt", {}, field), el("dd", {dataset: {field}}, shown));
            }
            const status = el("div", {}, search.get("saved") ? RD.ui.message("ok", "Saved.", "saved") : null);
            const view = el("pre", {className: "json", dataset: {test: "json"}}, JSON.stringify(object, null, 2));
            const editor = el("textarea", {spellcheck: false, dataset: {test: "editor"}});
            editor.value = JSON.stringify(RD.data.withoutMetadata(object), null, 2);
            editor.hidden = true;
            const save = RD.ui.button("Save", () => RD.data.save(name, guid, editor, answer.etag, status),
              {hidden: true, dataset: {test: "save"}});
            const edit = RD.ui.button("Edit", () => {
              editor.hidden = false; save.hidden = false; view.hidden = true; edit.hidden = true;
            }, {className: "plain", dataset: {test: "edit"}});
            const remove = RD.ui.confirmingButton("Delete", "Delete for good?", async () => {
              const gone = await RD.api.call("DELETE", RD.api.objectPath(name, guid),
                {headers: {"If-Match": answer.etag}});
              if (gone.status === 204) return RD.app.go(RD.data.browsePath(name, {}));
              status.replaceChildren(gone.status === 412 ? RD.data.conflict(gone) : RD.ui.errorMessage(gone));
            }, {dataset: {test: "delete"}});
            show(title, meta, el("div", {className: "row"}, edit, save, remove), status, view, editor,
              RD.object.view(object));
          },

          async save(name, guid, editor, etag, status) {
            let body;
            try { body = JSON.parse(editor.value); } catch (error) {
              return status.replaceChildren(RD.ui.message("error", "This is not JSON: " + error.message, "error"));
            }
            const answer = await RD.api.call("PUT", RD.api.objectPath(name, guid),
              {body, headers: {"If-Match": etag}});
            if (answer.status === 200) return RD.app.go(RD.data.objectPath(name, guid) + "?saved=1");
            status.replaceChildren(answer.status === 412 ? RD.data.conflict(answer) : RD.ui.errorMessage(answer));
          },

          // Someone else changed the object since it was read: nothing was overwritten.
          conflict(answer) {
            const details = (answer.json && answer.json.details) || {};
            return RD.ui.message("error", "Conflict: this object changed since you opened it" +
              (details.currentVersion ? " (it is now at version " + details.currentVersion + ")" : "") +
              ". Nothing was overwritten; reload it to see the other change, then edit again.", "conflict");
          },
        };

        """#
}
