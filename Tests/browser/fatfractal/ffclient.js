// A minimal client written for Roost's tests in the style of FatFractal's JavaScript SDK: the same
// wire format (headers, envelope, session cookie or simulated-cookie headers, ffRefs, temporary
// ffUrl, blobs PUT after the create), the same fields read from every answer. Not FatFractal's
// code: FatFractal.js is not Roost's to ship.
"use strict";

function FFClient(baseUrl, simulateCookies) {
  const key = (name) => baseUrl + "::" + name;
  const cache = {};
  let nextTemporaryUrl = 1000000;
  let sessionId = null;
  let user = null;

  function cookie(name) {
    for (const part of document.cookie.split(";")) {
      const [k, ...v] = part.split("=");
      if (k.trim() === name) return decodeURIComponent(v.join("="));
    }
    return null;
  }

  function forget() {
    sessionId = null;
    user = null;
    sessionStorage.removeItem(key("user"));
    sessionStorage.removeItem(key("sessionId"));
  }

  function remember(result) {
    // The fields FatFractal.js and FatFractal.m read from a login or register answer.
    if (!result || !result.loggedInUser) throw {status: 500, statusMessage: "No result.loggedInUser in response"};
    user = result.loggedInUser;
    sessionId = result.authResult.session.sessionId;
    sessionStorage.setItem(key("user"), JSON.stringify(user));
    sessionStorage.setItem(key("sessionId"), sessionId);
    cache[user.ffUrl] = user;
    return user;
  }

  function ajax(method, url, body, type) {
    return new Promise((resolve, reject) => {
      const xhr = new XMLHttpRequest();
      xhr.open(method, baseUrl + url, true);
      xhr.setRequestHeader("Data-type", type || "application/json");
      xhr.setRequestHeader("Content-type", type || "application/json");
      if (simulateCookies && sessionId && user) {
        xhr.setRequestHeader("X-Ff-Auth-User-Guid", user.guid);
        xhr.setRequestHeader("X-Ff-Auth-Session-Id", sessionId);
      }
      xhr.onreadystatechange = () => {
        if (xhr.readyState !== 4) return;
        if (xhr.status >= 200 && xhr.status < 300) {
          try { resolve(JSON.parse(xhr.responseText)); }
          catch (e) { reject({status: xhr.status, statusMessage: "unparseable: " + e}); }
          return;
        }
        if (xhr.status === 401) forget();
        let message = null;
        try { message = JSON.parse(xhr.responseText).statusMessage; } catch (e) {}
        reject({status: xhr.status, statusMessage: message});
      };
      xhr.send(body === undefined ? null : body);
    });
  }

  // References become ffRefs entries, blobs wait for the object's real ffUrl.
  function forPersistence(obj, pending) {
    if (!obj.ffUrl) obj.ffUrl = "" + nextTemporaryUrl++;
    const clone = {}, refs = [];
    for (const name in obj) {
      const value = obj[name];
      if (value && typeof value === "object" && value.ffUrl && cache[value.ffUrl]) {
        refs.push({name: name, type: "FFO", url: value.ffUrl});
      } else if (value && value.byteLength !== undefined) {
        pending[name] = value;
      } else {
        clone[name] = value;
      }
    }
    if (refs.length) clone.ffRefs = refs;
    return JSON.stringify(clone);
  }

  async function loadReferences(obj) {
    for (const ref of obj.ffRefs || []) {
      if (ref.type === "FFO") {
        obj[ref.name] = cache[ref.url] || (await this.getObjFromUri(ref.url));
      } else if (ref.type === "FFB") {
        const response = await fetch(baseUrl + ref.url);
        obj[ref.name] = new Uint8Array(await response.arrayBuffer());
      }
    }
    return obj;
  }

  this.register = async (request) => remember((await ajax("POST", "ff/register", JSON.stringify(request))).result);
  this.login = async (userName, password) =>
    remember((await ajax("POST", "ff/login", JSON.stringify({credential: {userName, password}}))).result);
  this.logout = async () => { const answer = await ajax("POST", "ff/logout"); forget(); return answer; };
  this.loggedIn = () => {
    const sid = simulateCookies ? sessionStorage.getItem(key("sessionId")) : cookie("sessionId");
    const stored = JSON.parse(sessionStorage.getItem(key("user")) || "null");
    if (sid && stored && stored.guid) { sessionId = sid; user = stored; return true; }
    return false;
  };
  this.loggedInUser = () => user;

  this.createObjAtUri = async (obj, collectionUri, clazz) => {
    obj.clazz = obj.clazz || clazz;
    const pending = {};
    const answer = await ajax("POST", collectionUri.replace(/^\//, ""), forPersistence(obj, pending));
    Object.assign(obj, answer.result);
    cache[obj.ffUrl] = obj;
    for (const name in pending) {
      const stored = await ajax("PUT", obj.ffUrl.replace(/^\//, "") + "/" + name, pending[name],
                                "application/octet-stream");
      Object.assign(obj, stored.result);
      obj[name] = pending[name];
    }
    return obj;
  };
  this.updateObj = async (obj) => {
    const answer = await ajax("PUT", obj.ffUrl.replace(/^\//, ""), forPersistence(obj, {}));
    Object.assign(obj, answer.result);
    cache[obj.ffUrl] = obj;
    return obj;
  };
  this.deleteObj = async (obj) => {
    const answer = await ajax("DELETE", obj.ffUrl.replace(/^\//, ""));
    delete cache[obj.ffUrl];
    return answer.statusMessage;
  };
  this.getArrayFromUri = async (uri) => {
    const answer = await ajax("GET", uri.replace(/^\//, ""));
    const items = Array.isArray(answer.result) ? answer.result : [answer.result];
    for (const item of items) if (item && item.ffUrl) cache[item.ffUrl] = item;
    return items;
  };
  this.getObjFromUri = async (uri) => (await this.getArrayFromUri(uri))[0] || null;
  this.loadReferences = loadReferences.bind(this);
  this.setDefaultPermission = (obj) => ajax("PUT", obj.ffUrl.replace(/^\//, "") + "/ffACL");
}
