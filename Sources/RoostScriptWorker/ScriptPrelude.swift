/// The JavaScript every fresh heap starts with: `print`, `console`, `require`, the `ff` module and
/// the driver the worker calls for each request: given the `invoke` frame as it came, it answers
/// the whole `done` or `failed` frame, which the worker sends on as it is. It is a function expression called with
/// (host, compile, moduleIdsJSON) and returns the driver; nothing but the documented globals is
/// left where scripts can reach it.
///
/// `host(op, a, b)` answers "log" (level, message), "call" (method, argsJSON → the reply frame) and
/// "source" (module id → source text); `compile(source, fileName, asFunction)` compiles or throws
/// a SyntaxError.
let scriptPrelude = #"""
    function (host, compile, moduleIdsJSON) {
    'use strict';
    var global = new Function('return this')();
    // Captured so a script that replaces JSON's functions breaks only itself, not the driver.
    var parse = JSON.parse, stringify = JSON.stringify;
    // The engine's hooks (Duktape.errCreate, .fin, .act) are not part of the scripts' API.
    delete global.Duktape;
    var moduleIds = {};
    parse(moduleIdsJSON).forEach(function (id) { moduleIds[id] = true; });
    var cache = {};
    var current = null;

    function text(value) {
        try { return String(value); } catch (e) { return Object.prototype.toString.call(value); }
    }
    function logger(level) {
        return function () {
            host('log', level, Array.prototype.map.call(arguments, text).join(' '));
        };
    }

    function ffCall(method, args) {
        var answer = parse(host('call', method, stringify(Array.prototype.slice.call(args))));
        if (answer.error) {
            var failure = answer.error;
            var error = new Error(failure.statusMessage === undefined ? method + ' failed' : failure.statusMessage);
            error.statusCode = failure.statusCode;
            error.statusMessage = failure.statusMessage;
            error.code = failure.code;
            Object.defineProperty(error, 'roostApiError', { value: true });
            throw error;
        }
        return answer.result === undefined ? null : answer.result;
    }
    function forwarded(method) {
        return function () { return ffCall(method, arguments); };
    }

    var ff = {};
    ['getObjFromUrl', 'getObjFromUri', 'getArrayFromUrl', 'getArrayFromUri', 'createObjAtUrl',
     'createObjAtUri', 'updateObj', 'deleteObj', 'getAllGuids', 'registerUser', 'resetPassword',
     'sendPushNotifications', 'sendEmail', 'deleteObjAtUrl', 'deleteObjAtUri', 'getGuids',
     'getResultCountForQuery', 'deleteAllForQuery', 'sendIOSPush', 'sendSMTPEmail', 'getAppMetaData',
     'executeFFDL'
    ].forEach(function (method) { ff[method] = forwarded(method); });
    function invocation() {
        if (current === null) throw new Error('no script invocation is running');
        return current;
    }
    ff.getEventHandlerData = ff.getExtensionRequestData = function () {
        var now = invocation();
        now.dataRead = true;
        return now.data;
    };
    ff.response = function () {
        var now = invocation();
        if (now.response === null) now.response = {};
        return now.response;
    };
    // Asked of the server on first use (a lookup most handlers never need), then kept.
    ff.getActiveUser = function () {
        var now = invocation();
        if (!Object.prototype.hasOwnProperty.call(now.context, 'activeUser')) {
            now.context.activeUser = ffCall('getActiveUser', []);
        }
        var user = now.context.activeUser;
        return user === undefined ? null : user;
    };
    ff.getHttpAppAddress = function () { return invocation().context.appAddress; };
    ff.logger = { info: logger('info'), warn: logger('warn'), error: logger('error'), debug: logger('debug'),
                  trace: logger('debug'), forceInfo: logger('info'), forceWarn: logger('warn') };
    \#(fatFractalHelpers)

    function resolve(from, id) {
        id = String(id);
        if (id.slice(-3) === '.js') id = id.slice(0, -3);
        if (id.charAt(0) !== '.') return id;
        var parts = from.split('/').slice(0, -1);
        id.split('/').forEach(function (part) {
            if (part === '..') parts.pop();
            else if (part !== '.' && part !== '') parts.push(part);
        });
        return parts.join('/');
    }
    function compileModule(id) {
        var source = host('source', id);
        return compile('function (exports, require, module) {' + source + '\n}', id, true);
    }
    function requirer(from) {
        return function require(id) {
            var resolved = resolve(from, id);
            if (resolved === 'ffef/FatFractal') return ff;
            // FatFractal's own modules for files and streams: a module that requires them but
            // never calls them loads; a call throws 501 naming it.
            if (resolved === 'fs' || resolved === 'io') return unavailableModule(resolved);
            if (Object.prototype.hasOwnProperty.call(cache, resolved)) return cache[resolved].exports;
            if (moduleIds[resolved] !== true) throw new Error("Cannot find module '" + id + "'");
            var body = compileModule(resolved);
            var module = { id: resolved, exports: {} };
            cache[resolved] = module;
            try {
                body.call(module.exports, module.exports, requirer(resolved), module);
            } catch (e) {
                delete cache[resolved];
                throw e;
            }
            return module.exports;
        };
    }

    function defineGlobal(name, value) {
        Object.defineProperty(global, name, { value: value, writable: true, configurable: true });
    }
    defineGlobal('print', logger('info'));
    defineGlobal('console', { log: logger('info'), info: logger('info'), warn: logger('warn'),
                              error: logger('error'), debug: logger('debug') });
    defineGlobal('require', requirer(''));

    function place(error) {
        if (moduleIds[error.fileName] === true && typeof error.lineNumber === 'number') {
            return { module: error.fileName, line: error.lineNumber };
        }
        var frame = /\(([^()]+):(\d+)\)/g, found;
        while ((found = frame.exec(String(error.stack))) !== null) {
            if (moduleIds[found[1]] === true) return { module: found[1], line: Number(found[2]) };
        }
        return null;
    }
    function failure(thrown) {
        if (thrown instanceof Error && thrown.roostApiError === true) {
            return { origin: 'api', statusCode: thrown.statusCode, statusMessage: thrown.statusMessage,
                     code: thrown.code };
        }
        if (!(thrown instanceof Error) && typeof thrown === 'object' && thrown !== null) {
            var status = thrown.statusCode;
            var number = typeof status === 'number' ? status : (typeof status === 'string' && /^\s*\d+\s*$/.test(status) ? Number(status) : NaN);
            if (number === Math.floor(number) && isFinite(number)) {
                var refusal = { origin: 'refusal', statusCode: number };
                if (thrown.statusMessage !== undefined && thrown.statusMessage !== null) {
                    refusal.statusMessage = text(thrown.statusMessage);
                }
                return refusal;
            }
        }
        var described = { origin: 'script', message: text(thrown) };
        if (thrown instanceof Error) {
            if (typeof thrown.stack === 'string') described.stack = thrown.stack;
            var where = place(thrown);
            if (where !== null) { described.module = where.module; described.line = where.line; }
        }
        return described;
    }

    function run(request) {
        if (typeof request.code === 'string') {
            return compile(request.code, 'code', false).call(global);
        }
        var exported = global.require(request.module);
        var name = request['function'];
        if (exported === null || typeof exported !== 'object' && typeof exported !== 'function' ||
            typeof exported[name] !== 'function') {
            throw new TypeError(request.module + ' has no function ' + name);
        }
        return exported[name](request.argument);
    }
    function response() {
        var chosen = current.response;
        if (chosen === null) return null;
        return { result: chosen.result === undefined ? null : chosen.result,
                 responseCode: chosen.responseCode === undefined ? null : chosen.responseCode,
                 statusMessage: chosen.statusMessage === undefined ? null : chosen.statusMessage,
                 mimeType: chosen.mimeType === undefined ? null : chosen.mimeType };
    }
    function invoke(requestJSON) {
        var request = parse(requestJSON);
        current = { data: request.data === undefined ? null : request.data, dataRead: false, response: null,
                    kind: request.kind,
                    context: request.context !== null && typeof request.context === 'object' ? request.context : {} };
        if (typeof request.argument !== 'string') request.argument = stringify(current.data);
        global.FF_EVENT_DATA_JSON = request.argument;
        global.FF_EXTENSION_REQUEST_DATA_JSON = request.argument;
        try {
            var value = run(request);
            return stringify({ t: 'done', id: request.id, value: value === undefined ? null : value,
                               response: response(),
                               eventData: current.dataRead && request.returnsEventData === true ? current.data : null });
        } catch (thrown) {
            return stringify({ t: 'failed', id: request.id, error: failure(thrown) });
        } finally {
            current = null;
        }
    }
    function check(id) {
        try {
            compileModule(id);
            return '';
        } catch (thrown) {
            return stringify({ message: text(thrown), line: thrown !== null && typeof thrown === 'object' ? thrown.lineNumber : undefined });
        }
    }
    return function driver(request, payload) {
        return request === 'invoke' ? invoke(payload) : check(payload);
    };
    }
    """#
