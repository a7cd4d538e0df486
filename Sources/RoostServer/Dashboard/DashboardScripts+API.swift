extension DashboardScripts {
    /// Calls to the API. The token lives in `sessionStorage` (gone with the tab, never a cookie,
    /// so no other site can make the browser send it) and travels in `Authorization`.
    static let api = #"""
        "use strict";
        window.RD = window.RD || {};

        RD.api = {
          tokenKey: "roost.dashboard.token",
          userKey: "roost.dashboard.user",

          token() { return sessionStorage.getItem(RD.api.tokenKey); },
          user() {
            try { return JSON.parse(sessionStorage.getItem(RD.api.userKey) || "null"); } catch (e) { return null; }
          },
          remember(token, user) {
            sessionStorage.setItem(RD.api.tokenKey, token);
            sessionStorage.setItem(RD.api.userKey, JSON.stringify({guid: user.guid, userName: user.userName}));
          },
          forget() {
            sessionStorage.removeItem(RD.api.tokenKey);
            sessionStorage.removeItem(RD.api.userKey);
          },

          // {status, json, etag}; a 401 on a call made with the token means it ended: back to login.
          async call(method, path, options) {
            options = options || {};
            const headers = Object.assign({}, options.headers || {});
            const token = RD.api.token();
            if (token && !options.anonymous) headers["Authorization"] = "Bearer " + token;
            let body;
            if (options.body !== undefined) {
              headers["Content-Type"] = "application/json";
              body = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
            }
            let response;
            try {
              response = await fetch(path, {method, headers, body, credentials: "omit", cache: "no-store"});
            } catch (error) {
              return {status: 0, json: {message: "The server cannot be reached: " + error}, etag: null};
            }
            const text = await response.text();
            let json = null;
            if (text) { try { json = JSON.parse(text); } catch (e) { json = {message: text}; } }
            const answer = {status: response.status, json, etag: response.headers.get("ETag")};
            if (response.status === 401 && token && !options.anonymous) {
              RD.api.forget();
              RD.app.sessionEnded(json && json.message);
            }
            return answer;
          },

          // Query parameters, skipping empty values.
          query(parameters) {
            const search = new URLSearchParams();
            for (const [name, value] of Object.entries(parameters)) {
              if (value !== undefined && value !== null && value !== "") search.set(name, String(value));
            }
            const text = search.toString();
            return text ? "?" + text : "";
          },

          collectionPath(name) { return "/ff/resources/" + encodeURIComponent(name); },
          objectPath(name, guid) { return RD.api.collectionPath(name) + "/" + encodeURIComponent(guid); },
        };

        """#
}
