/// The dashboard's JavaScript, one file per area, written for Roost (no framework, no build
/// step). Each file adds to the one global `RD`; `app.js`, loaded last, starts the page.
enum DashboardScripts {
    /// The router, the navigation bar and the login form.
    static let app = #"""
        "use strict";
        window.RD = window.RD || {};

        RD.app = {
          notice: null,
          // Counts renders, so that a slow view never replaces the page asked for after it.
          generation: 0,

          go(path) {
            history.pushState(null, "", path);
            RD.app.render();
          },

          // A token that stopped working (revoked, expired): log in again.
          sessionEnded(message) {
            RD.app.notice = message || "Your session ended; log in again.";
            history.pushState(null, "", "/_/login");
            RD.app.render();
          },

          nav() {
            const {el, link} = RD.ui;
            const nav = document.getElementById("nav");
            const user = RD.api.user();
            if (!RD.api.token() || !user) return nav.replaceChildren();
            nav.replaceChildren(link("/_/", "Collections"), link("/_/users", "Users"),
              el("span", {className: "spacer"}),
              el("span", {className: "who", dataset: {test: "who"}}, user.userName),
              el("a", {href: "/_/login", dataset: {test: "logout"}, async onclick(event) {
                event.preventDefault();
                await RD.api.call("POST", "/ff/logout");
                RD.api.forget();
                RD.app.go("/_/login");
              }}, "Log out"));
          },

          async render() {
            RD.app.generation += 1;
            const path = location.pathname;
            const search = new URLSearchParams(location.search);
            RD.app.nav();
            if (!RD.api.token()) return RD.app.login();
            const parts = path.replace(/^\/_\/?/, "").split("/").filter((part) => part).map(decodeURIComponent);
            if (parts[0] === "login") return RD.app.go("/_/");
            if (parts[0] === "collections" && parts.length === 2) return RD.data.objects(parts[1], search);
            if (parts[0] === "collections" && parts.length === 3) return RD.data.object(parts[1], parts[2], search);
            if (parts[0] === "users" && parts.length === 1) return RD.users.list(search);
            if (parts[0] === "users" && parts.length === 2) return RD.users.user(parts[1]);
            if (parts.length === 0) return RD.data.collections(search);
            RD.ui.show(RD.ui.message("error", "The dashboard has no page at " + path + ".", "no-page"));
          },

          login() {
            const {el} = RD.ui;
            if (location.pathname !== "/_/login") history.replaceState(null, "", "/_/login");
            const status = el("div", {}, RD.app.notice ? RD.ui.message("error", RD.app.notice, "notice") : null);
            RD.app.notice = null;
            const userName = el("input", {type: "text", name: "userName", autocomplete: "username", required: true});
            const password = el("input", {type: "password", name: "password", autocomplete: "current-password",
              required: true});
            const submit = el("button", {type: "submit"}, "Log in");
            const form = el("form", {className: "login", async onsubmit(event) {
              event.preventDefault();
              submit.disabled = true;
              try { await RD.app.logIn(userName.value, password.value, status); } finally { submit.disabled = false; }
            }}, el("h1", {}, "Roost dashboard"), el("label", {}, "Administrator's user name"), userName,
              el("label", {}, "Password"), password, el("div", {className: "row"}, submit), status);
            RD.ui.show(form);
            userName.focus();
          },

          async logIn(userName, password, status) {
            // A device of its own per tab: logging in elsewhere does not end this tab's session.
            const device = "dashboard-" + Array.from(crypto.getRandomValues(new Uint8Array(6)),
              (byte) => byte.toString(16).padStart(2, "0")).join("");
            const answer = await RD.api.call("POST", "/ff/login",
              {anonymous: true, body: {userName, password, deviceId: device}});
            if (answer.status !== 200) return status.replaceChildren(RD.ui.errorMessage(answer, "login-error"));
            RD.api.remember(answer.json.token, answer.json.user);
            // Only an administrator's session may stay: the server says who is one.
            const check = await RD.api.call("GET", "/ff/admin/collections");
            if (check.status === 403) {
              await RD.api.call("POST", "/ff/logout");
              RD.api.forget();
              return status.replaceChildren(RD.ui.message("error",
                "This account is not an administrator; 'roost users promote' makes one.", "login-error"));
            }
            RD.app.go("/_/");
          },
        };

        window.addEventListener("popstate", () => RD.app.render());
        RD.app.render();

        """#
}
