/// The dashboard's one page and its style sheet. The page holds no script of its own (the CSP
/// forbids inline script): it loads the files under `/_/assets/`, which build every element.
enum DashboardPage {
    static let html = #"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="referrer" content="no-referrer">
        <title>Roost dashboard</title>
        <link rel="stylesheet" href="/_/assets/dashboard.css">
        <script src="/_/assets/api.js" defer></script>
        <script src="/_/assets/ui.js" defer></script>
        <script src="/_/assets/data.js" defer></script>
        <script src="/_/assets/users.js" defer></script>
        <script src="/_/assets/object.js" defer></script>
        <script src="/_/assets/app.js" defer></script>
        </head>
        <body>
        <header id="bar"><a id="home" href="/_/">Roost</a><nav id="nav"></nav></header>
        <main id="main"><p class="muted">Loading…</p></main>
        <noscript><p>The dashboard needs JavaScript.</p></noscript>
        </body>
        </html>

        """#

    static let css = #"""
        :root { --ink: #1d2330; --muted: #667085; --line: #d9dde5; --accent: #2f5bd3; --bad: #b42318;
          --good: #067647; --paper: #fff; --wash: #f5f6f8; font-family: system-ui, sans-serif; }
        * { box-sizing: border-box; }
        body { margin: 0; color: var(--ink); background: var(--wash); font-size: 15px; }
        #bar { display: flex; gap: 24px; align-items: center; padding: 10px 24px; background: var(--ink); }
        #bar a { color: #fff; text-decoration: none; }
        #home { font-weight: 700; }
        #nav { display: flex; gap: 16px; flex: 1; }
        #nav .spacer { flex: 1; }
        #nav .who { color: #c7cbd4; }
        main { max-width: 1100px; margin: 24px auto; padding: 0 24px; }
        h1 { font-size: 22px; margin: 0 0 16px; }
        h2 { font-size: 17px; margin: 24px 0 8px; }
        a { color: var(--accent); }
        table { width: 100%; border-collapse: collapse; background: var(--paper); }
        th, td { text-align: left; padding: 6px 10px; border-bottom: 1px solid var(--line);
          vertical-align: top; }
        th { font-weight: 600; color: var(--muted); font-size: 13px; }
        td.preview { font-family: ui-monospace, monospace; font-size: 12px; color: var(--muted);
          max-width: 520px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
        pre, textarea { font-family: ui-monospace, monospace; font-size: 13px; }
        pre.json { background: var(--paper); border: 1px solid var(--line); padding: 12px;
          overflow: auto; white-space: pre-wrap; word-break: break-word; }
        textarea { width: 100%; min-height: 320px; padding: 10px; border: 1px solid var(--line); }
        form.login { max-width: 360px; background: var(--paper); padding: 24px; border: 1px solid var(--line); }
        label { display: block; margin: 10px 0 4px; font-size: 13px; color: var(--muted); }
        input[type=text], input[type=password], input[type=search] { width: 100%; padding: 7px 9px;
          border: 1px solid var(--line); font-size: 14px; }
        button { padding: 6px 14px; border: 1px solid var(--accent); background: var(--accent);
          color: #fff; cursor: pointer; font-size: 14px; }
        button.plain { background: var(--paper); color: var(--accent); }
        button.danger { background: var(--bad); border-color: var(--bad); }
        button:disabled { opacity: .45; cursor: default; }
        .row { display: flex; gap: 10px; align-items: center; margin: 10px 0; }
        .row input { flex: 1; }
        .muted { color: var(--muted); }
        .message { padding: 10px 12px; margin: 10px 0; border: 1px solid var(--line);
          background: var(--paper); white-space: pre-wrap; }
        .message.error { border-color: var(--bad); color: var(--bad); }
        .message.ok { border-color: var(--good); color: var(--good); }
        .caret { font-family: ui-monospace, monospace; white-space: pre; display: block; }
        dl.meta { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; margin: 0 0 16px;
          background: var(--paper); padding: 12px; border: 1px solid var(--line); }
        dl.meta dt { color: var(--muted); font-size: 13px; }
        dl.meta dd { margin: 0; font-family: ui-monospace, monospace; font-size: 13px; }
        img.preview { max-width: 320px; max-height: 240px; margin: 6px 0; border: 1px solid var(--line); }
        ul { background: var(--paper); border: 1px solid var(--line); padding: 10px 28px; }

        """#
}
