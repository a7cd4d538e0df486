/// The part of FatFractal's `ff` module that needs no server: its user, group and metadata
/// constructors, reference helpers, debugging switches, and the functions Roost does not offer,
/// which throw an error naming themselves instead of being undefined. Inserted into
/// ``scriptPrelude`` after the `ff` object's server calls; `ff`, `invocation`, `ffCall` and
/// `stringify` are the prelude's.
let fatFractalHelpers = #"""
    function copyMembers(target, source) {
        if (source !== null && typeof source === 'object') {
            for (var key in source) {
                if (Object.prototype.hasOwnProperty.call(source, key)) target[key] = source[key];
            }
        }
    }
    function unavailable(name) {
        return function () {
            var error = new Error('ff.' + name + ' is not available on Roost');
            error.statusCode = 501;
            error.statusMessage = error.message;
            error.code = 'script_call_unavailable';
            Object.defineProperty(error, 'roostApiError', { value: true });
            throw error;
        };
    }
    function unavailableModule(id) {
        return new Proxy({}, {
            get: function (target, key) {
                if (typeof key !== 'string') return undefined;
                return function () {
                    var error = new Error("require('" + id + "')." + key +
                        ' is not available on Roost: scripts have no file system; store files as blobs');
                    error.statusCode = 501;
                    error.statusMessage = error.message;
                    error.code = 'script_call_unavailable';
                    Object.defineProperty(error, 'roostApiError', { value: true });
                    throw error;
                };
            }
        });
    }
    function FFUser(data) {
        copyMembers(this, data);
        if (!data) this.createdBy = 'system';
        this.clazz = 'FFUser';
        this.addGroup = unavailable('FFUser.addGroup');
        this.removeGroup = unavailable('FFUser.removeGroup');
        this.groupWithName = unavailable('FFUser.groupWithName');
    }
    function FFUserGroup(data) {
        copyMembers(this, data);
        if (!data) this.createdBy = 'system';
        this.clazz = 'FFUserGroup';
        this.addUser = unavailable('FFUserGroup.addUser');
        this.removeUser = unavailable('FFUserGroup.removeUser');
    }
    var metadataDefaults = { clazz: null, ffUrl: null, guid: null, ffRL: null, objVersion: null,
                             createdBy: null, createdAt: null, updatedBy: null, updatedAt: null };
    function FFMetaData(object) {
        for (var key in metadataDefaults) {
            this[key] = object ? object[key] : metadataDefaults[key];
        }
        this.ffRefs = object ? object.ffRefs : [];
        this.ffUserCanEdit = object ? object.ffUserCanEdit : false;
    }
    ff.FFUser = FFUser;
    ff.FFUserGroup = FFUserGroup;
    ff.FFMetaData = FFMetaData;

    var plainActiveUser = ff.getActiveUser;
    ff.getActiveUser = function () {
        var user = plainActiveUser();
        return user === null ? null : new FFUser(user);
    };
    // The server takes the guid as a guid: pasted into a URL, '(email matches …)' would be a query.
    ff.getUser = function (guid, asUserGuid) {
        var found = ffCall('getUser', [guid, asUserGuid]);
        return found === null ? null : new FFUser(found);
    };
    ff.getGroup = function (guid, asUserGuid) {
        var found = ffCall('getGroup', [guid, asUserGuid]);
        return found === null ? null : new FFUserGroup(found);
    };
    // Roost serves the same address to HTTP and HTTPS clients: the one it is configured with.
    ff.getHttpsAppAddress = ff.getHttpAppAddress;
    ff.getHttpRequestData = function () {
        var now = invocation();
        if (now.kind !== 'extension' || now.data === null || typeof now.data !== 'object') return null;
        return { httpMethod: now.data.httpMethod, httpRequestUri: now.data.httpRequestUri,
                 httpParameters: now.data.httpParameters, httpHeaders: now.data.httpHeaders,
                 httpCookies: now.data.httpCookies };
    };

    var debugging = false;
    ff.setDebug = function (flag) { debugging = !!flag; };
    ff.isDebug = function () { return debugging; };
    // Every read goes to the store: there is no cache to bypass.
    ff.bypassCache = function (call) { return call; };

    function referenceURL(object, name) {
        if (!object || !object.ffRefs || !name) return null;
        for (var index = 0; index < object.ffRefs.length; index++) {
            if (object.ffRefs[index].name === name) return object.ffRefs[index].url;
        }
        return null;
    }
    ff.getRefUrl = referenceURL;
    ff.refChanged = function (before, after, name) { return referenceURL(before, name) !== referenceURL(after, name); };
    ff.addReferenceToObj = function (url, name, object) {
        if (url === null || url === undefined || name === null || name === undefined || !object) {
            throw new Error('addReferenceToObj: give the ffUrl, the reference name and the object');
        }
        if (typeof url !== 'string' || !/^\/ff\/resources\/[-A-Za-z0-9_@]+\/[-A-Za-z0-9_@]+/.test(url)) {
            throw new Error('addReferenceToObj: ' + url + ' is not an ffUrl such as /ff/resources/Collection/guid');
        }
        if (!object.ffRefs) object.ffRefs = [];
        if (referenceURL(object, name) !== null) {
            throw new Error('addReferenceToObj: the object already has a reference named ' + name);
        }
        object.ffRefs.push({ name: name, type: 'FFO', url: url });
    };
    ff.removeReferenceFromObj = function (name, object) {
        if (name === null || name === undefined || !object) {
            throw new Error('removeReferenceFromObj: give the reference name and the object');
        }
        if (!object.ffRefs) return;
        object.ffRefs = object.ffRefs.filter(function (reference) { return reference.name !== name; });
    };
    ff.getReferredObject = function (name, object, asUserGuid) {
        if (name === null || name === undefined || !object) {
            throw new Error('getReferredObject: give the reference name and the object');
        }
        var url = referenceURL(object, name);
        // Only the one object a reference names: a stored field can carry any text as its url.
        return url === null ? null : ffCall('getReferredObject', [url, asUserGuid]);
    };

    // The object before the update comes from the server when asked; the new one is the event's.
    ff.getUpdateEventHandlerData = function () {
        var now = invocation();
        if (now.update === undefined) {
            now.update = { 'old': ffCall('getUpdateEventHandlerData', []), 'new': ff.getEventHandlerData() };
        }
        return now.update;
    };

    ['getCursorForQuery', 'grabBagGetAll', 'grabBagCountObjects',
     'grabBagGetAllForQuery', 'grabBagAdd', 'grabBagRemove', 'setPermissionOnObject',
     'setDefaultPermissionOnObject', 'getPermission', 'getBlob', 'saveBlob',
     'getFfdlSetting', 'filterObjectsWithFFRQL', 'executeSQL', 'executeDepthQuery',
     'xml2json'].forEach(function (name) { ff[name] = unavailable(name); });
    """#
