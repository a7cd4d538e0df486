extension DashboardScripts {
    /// Users (the `FFUser` collection, paged by cursor like any other) and one user's sessions,
    /// each revocable.
    static let users = #"""
        "use strict";
        window.RD = window.RD || {};

        RD.users = {
          async list(search) {
            const show = RD.ui.shower();
            const {el, link} = RD.ui;
            const filter = search.get("filter") || "";
            const input = el("input", {type: "search", name: "filter", value: filter,
              placeholder: "a Roost query, such as  userName eq 'ada'", dataset: {test: "filter"}});
            const form = el("form", {className: "row", onsubmit(event) {
              event.preventDefault();
              RD.app.go("/_/users" + RD.api.query({filter: input.value.trim()}));
            }}, input, el("button", {type: "submit"}, "Search"));
            const title = el("h1", {}, "Users");
            const answer = await RD.api.call("GET", "/ff/admin/collections/FFUser/objects" +
              RD.api.query({limit: RD.data.pageSize, filter, after: search.get("after"), before: search.get("before")}));
            if (answer.status !== 200) return show(title, form, RD.ui.errorMessage(answer, "query-error"));
            const page = answer.json;
            const rows = page.items.map((user) => el("tr", {dataset: {guid: user.guid}},
              el("td", {}, link("/_/users/" + encodeURIComponent(user.guid), String(user.userName || user.guid))),
              el("td", {}, String(user.email || "")),
              el("td", {}, user.admin === true ? "administrator" : ""),
              el("td", {}, user.active === false ? "deactivated" : "active"),
              el("td", {}, RD.ui.time(user.createdAt))));
            const go = (parameters) => RD.app.go("/_/users" + RD.api.query(Object.assign({filter}, parameters)));
            show(title, form,
              rows.length ? RD.ui.table(["user name", "email", "role", "state", "created"], rows, "users") :
                el("p", {className: "muted"}, "No user on this page."),
              el("div", {className: "row"},
                RD.ui.button("Previous", () => go({before: page.previous}),
                  {className: "plain", disabled: !page.previous, dataset: {test: "previous"}}),
                RD.ui.button("Next", () => go({after: page.next}),
                  {className: "plain", disabled: !page.next, dataset: {test: "next"}})));
          },

          async user(guid) {
            const show = RD.ui.shower();
            const {el, link} = RD.ui;
            const answer = await RD.api.call("GET", RD.api.objectPath("FFUser", guid));
            const title = el("h1", {}, link("/_/users", "Users"), " / ",
              answer.status === 200 ? String(answer.json.userName || guid) : guid);
            if (answer.status !== 200) return show(title, RD.ui.errorMessage(answer));
            const user = answer.json;
            const status = el("div");
            const sessions = el("div", {}, el("p", {className: "muted"}, "Loading…"));
            // Promotion and deactivation are PATCHes of the user object, which only administrators may make;
            // deactivating ends the user's sessions on the server.
            const change = (fields, done) => RD.ui.confirmingButton(done[0], done[1], async () => {
              const answer = await RD.api.call("PATCH", RD.api.objectPath("FFUser", guid), {body: fields});
              if (answer.status !== 200) return status.replaceChildren(RD.ui.errorMessage(answer));
              RD.app.go("/_/users/" + encodeURIComponent(guid));
            }, {className: "plain", dataset: {test: Object.keys(fields)[0]}});
            show(title,
              el("p", {}, link(RD.data.objectPath("FFUser", guid), "Open as an object"),
                el("span", {className: "muted", dataset: {test: "standing"}}, " · " + (user.email || "no email") +
                  (user.admin === true ? " · administrator" : "") + (user.active === false ? " · deactivated" : ""))),
              el("div", {className: "row"},
                user.admin === true ? change({admin: false}, ["Remove administrator", "Remove for good?"]) :
                  change({admin: true}, ["Make administrator", "Make an administrator?"]),
                user.active === false ? change({active: true}, ["Reactivate", "Reactivate now?"]) :
                  change({active: false}, ["Deactivate", "Deactivate and end every session?"])),
              el("h2", {}, "Sessions"), status, sessions);
            await RD.users.sessions(guid, sessions, status);
          },

          async sessions(guid, into, status) {
            const {el} = RD.ui;
            const answer = await RD.api.call("GET", "/ff/admin/sessions" + RD.api.query({user: guid}));
            if (answer.status !== 200) return into.replaceChildren(RD.ui.errorMessage(answer));
            const rows = answer.json.items.map((session) => el("tr", {dataset: {session: session.id}},
              el("td", {}, session.deviceId + (session.current ? " (this dashboard)" : "")),
              el("td", {}, String(session.deviceType || "")),
              el("td", {}, String(session.clientAddress || "")),
              el("td", {}, RD.ui.time(session.createdAt)),
              el("td", {}, RD.ui.time(session.expiresAt)),
              el("td", {}, RD.ui.confirmingButton("Revoke", "Revoke now?", async () => {
                const revoked = await RD.api.call("DELETE", "/ff/admin/sessions/" + encodeURIComponent(session.id));
                if (revoked.status !== 204) return status.replaceChildren(RD.ui.errorMessage(revoked));
                if (session.current) { RD.api.forget(); return RD.app.sessionEnded("You revoked this dashboard's session."); }
                status.replaceChildren(RD.ui.message("ok", "Session revoked.", "revoked"));
                await RD.users.sessions(guid, into, status);
              }, {dataset: {test: "revoke"}}))));
            into.replaceChildren(rows.length ?
              RD.ui.table(["device", "type", "address", "since", "expires", ""], rows, "sessions") :
              el("p", {className: "muted", dataset: {test: "no-sessions"}}, "No live session."));
          },
        };

        """#
}
