extension DashboardScripts {
    /// Building the page: every element made with `createElement`, every value set as
    /// `textContent` or a property (never HTML parsed from data), links routed on the client.
    static let ui = #"""
        "use strict";
        window.RD = window.RD || {};

        RD.ui = {
          // el("a", {href: "/_/x", className: "c", dataset: {test: "id"}}, "text", child…)
          el(tag, properties, ...children) {
            const node = document.createElement(tag);
            for (const [name, value] of Object.entries(properties || {})) {
              if (name === "dataset") Object.assign(node.dataset, value);
              else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
              else node[name] = value;
            }
            for (const child of children) {
              if (child === null || child === undefined || child === false) continue;
              node.append(typeof child === "string" || typeof child === "number" ? String(child) : child);
            }
            return node;
          },

          // A link the client routes (no reload), or opens in a new tab as a link does.
          link(href, text, properties) {
            return RD.ui.el("a", Object.assign({href, onclick: RD.ui.follow}, properties || {}), text);
          },
          follow(event) {
            if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
            event.preventDefault();
            RD.app.go(event.currentTarget.getAttribute("href"));
          },

          main() { return document.getElementById("main"); },
          show(...children) { RD.ui.main().replaceChildren(...children); },
          // show() for a view that awaits answers: once another page has been asked for, what this
          // view still shows would replace it, so it shows nothing.
          shower() {
            const generation = RD.app.generation;
            return (...children) => { if (generation === RD.app.generation) RD.ui.show(...children); };
          },

          message(kind, text, testName) {
            return RD.ui.el("div", {className: "message " + kind, dataset: {test: testName || kind}}, text);
          },

          // An API error as a message: its code and sentence; a query error also shows the query
          // with a caret under the column where it went wrong.
          errorMessage(answer, testName) {
            const json = answer.json || {};
            const box = RD.ui.message("error", (json.message || ("HTTP " + answer.status)) +
              (json.code ? " (" + json.code + ")" : ""), testName || "error");
            const details = json.details || {};
            if (json.code === "invalid_query" && typeof details.query === "string" && details.column) {
              box.append(RD.ui.el("span", {className: "caret"}, details.query),
                RD.ui.el("span", {className: "caret", dataset: {test: "caret"}},
                  " ".repeat(Math.max(0, details.column - 1)) + "^ column " + details.column));
            }
            return box;
          },

          time(milliseconds) {
            if (typeof milliseconds !== "number") return "";
            return new Date(milliseconds).toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z");
          },

          table(headings, rows, testName) {
            const head = RD.ui.el("tr", {}, ...headings.map((text) => RD.ui.el("th", {}, text)));
            return RD.ui.el("table", {dataset: {test: testName}}, RD.ui.el("thead", {}, head),
              RD.ui.el("tbody", {}, ...rows));
          },

          button(text, onclick, properties) {
            return RD.ui.el("button", Object.assign({type: "button", onclick}, properties || {}), text);
          },

          // A button that asks once more before it acts: the second click does it.
          confirmingButton(text, confirmText, action, properties) {
            let armed = false;
            const button = RD.ui.button(text, async () => {
              if (!armed) { armed = true; button.textContent = confirmText; return; }
              button.disabled = true;
              await action();
            }, Object.assign({className: "danger"}, properties || {}));
            return button;
          },
        };

        """#
}
