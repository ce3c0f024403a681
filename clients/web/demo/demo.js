// The page tally serve serves at /demo, on the web client: a feed of posts
// whose likes and views are counted on the posts (TALLY_COUNTS), with their
// count of comments where one is declared (comments=count(comments)), their
// likes (or views) today and a week's sparkline where a window of them by
// day is declared (likes_today=likes per day), and a trend score and a
// Trending order where a trend is (hot=trend(likes, 6h)), and each post's place and the signed-in user's
// own where the likes are ranked (rank(likes)); or one counter of its own
// (/demo?counter=NAME). Bundled with the Firebase SDK
// into internal/tools/stack/demo/demo.js by `npm run demo`.
import { initializeApp } from "firebase/app";
import { connectAuthEmulator, getAuth, onAuthStateChanged, signOut } from "firebase/auth";
import {
  addDoc, collection, connectFirestoreEmulator, getFirestore, limit, onSnapshot, orderBy, query, serverTimestamp, waitForPendingWrites, where,
} from "firebase/firestore";

import { addChild, addTo, countRef, getTally, onCount, onVote, seriesOf, trendNow, vote } from "../src/index.js";
import { onRank } from "../src/rank.js";
// The starter app's sign-in, which apps copy: the demo signs in as it does.
import { wireSignIn } from "../../../examples/like-button/src/signin.js";

const $ = (id) => document.getElementById(id);
const config = JSON.parse($("config").textContent);
const app = initializeApp({ projectId: config.project, apiKey: "demo-api-key" });
const db = config.database === "(default)" ? getFirestore(app) : getFirestore(app, config.database);
const [host, port] = config.firestoreHost.split(":");
connectFirestoreEmulator(db, host, Number(port));
const auth = getAuth(app);
if (config.authHost) connectAuthEmulator(auth, `http://${config.authHost}`, { disableWarnings: true });
const tally = getTally(app, { url: "/Increment", collection: config.collection, voters: config.voters, firestore: db, auth });

// say tells the person what went wrong, in words rather than the API's.
function say(e) {
  $("problem").textContent = plain(e);
  $("problem").dataset.kind = "error";
}

function plain(e) {
  if (e?.code === "tally/refused") {
    if (e.status === 401) return "Please sign in again: your sign-in has run out.";
    if (e.status === 403) return "This page may not change counts here.";
    if (e.status === 404) return "This post is gone.";
    return `That did not count: ${e.message}`;
  }
  if (e?.code === "permission-denied") return "You may not do that here.";
  if (e?.code === "unavailable") return "The server cannot be reached just now; the page will catch up once it can.";
  return `Something went wrong: ${e?.message ?? e}`;
}

// plural writes "1 like", "2 likes".
const plural = (n, one, many) => (n === 1 ? one : many);

// Likes are votes, one per signed-in user; without sign-in, steps of one.
// One gesture: a press likes, a second press takes the like back.
function like(ref, on) {
  $("problem").textContent = "";
  return config.authHost ? vote(ref, on) : addTo(ref, on ? 1 : -1);
}

// pending shows a like that is not yet answered: sending; kept on this
// device until the browser is back online; or, when the server cannot be
// reached (the client sends it again, with the same key, until it is
// answered), kept and sent again.
function pending(button, note, promise) {
  button.dataset.pending = "true";
  let unreachable = false;
  const show = () => {
    if (button.dataset.pending !== "true") return;
    note.textContent = !navigator.onLine ? "Offline: your like is saved on this device and will be sent when you are back online."
      : unreachable ? "The server cannot be reached just now. Your like is kept on this device and sent again until it gets there; it counts once."
        : "Sending…";
    note.classList.toggle("waiting", !navigator.onLine || unreachable);
  };
  // A like still unanswered after a moment: can the server be reached?
  const probe = setInterval(() => {
    fetch("/Increment", { method: "OPTIONS" }).then(() => (unreachable = false), () => (unreachable = true)).finally(show);
  }, 2000);
  show();
  addEventListener("online", show);
  addEventListener("offline", show);
  const done = () => {
    clearInterval(probe);
    delete button.dataset.pending;
    note.classList.remove("waiting");
    removeEventListener("online", show);
    removeEventListener("offline", show);
  };
  return promise.finally(done);
}

// ago says how long ago t was, as a person says it.
function ago(t) {
  const s = (Date.now() - t.getTime()) / 1000;
  if (s < 60) return "just now";
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return t.toLocaleDateString();
}

// Sign-in: the Auth emulator takes any email, and a password of 6 or more.
$("signin-form").hidden = !config.authHost;
wireSignIn(auth, $("signin-form"), (m, kind) => {
  $("problem").textContent = m;
  $("problem").dataset.kind = kind;
});
$("signout").onclick = () => signOut(auth);
// needUser holds the like buttons, which need a signed-in user: label()
// sets each one's state whenever that changes.
const needUser = new Set();
let user = null;
const signedIn = new Promise((resolve) => {
  onAuthStateChanged(auth, (u) => {
    user = u;
    $("signin-form").hidden = !config.authHost || !!u;
    $("signed-in").hidden = !u;
    $("who").textContent = u?.email ?? "";
    for (const b of needUser) label(b);
    if (u || !config.authHost) resolve();
  });
});

// label sets a like button's label and state from its aria-pressed and
// whether anyone is signed in.
function label(button) {
  const out = config.authHost && !user;
  button.disabled = out;
  button.textContent = out ? "Sign in to like" : button.getAttribute("aria-pressed") === "true" ? "Liked" : "Like";
}

function likeButton(button) {
  needUser.add(button);
  label(button);
  return (on) => {
    button.setAttribute("aria-pressed", String(on));
    label(button);
  };
}

const params = new URLSearchParams(location.search);
if (config.feed && !params.has("counter")) feed(config.feed);
else one(params.get("counter") || "likes");

// one shows a counter of the guide layout, as the demo has since its first.
function one(name) {
  $("one").hidden = false;
  $("counter").textContent = name;
  const ref = countRef(tally, name);
  const button = $("like"), note = $("result");
  const press = likeButton(button);
  onCount(ref, (n) => {
    $("total").textContent = String(n);
    $("total-noun").textContent = plural(n, "like", "likes");
  }, say);
  if (config.authHost) onVote(ref, press);
  button.onclick = () => {
    const on = button.getAttribute("aria-pressed") !== "true";
    press(on);
    pending(button, note, like(ref, on)).then((a) => {
      note.textContent = on ? (a.changed ? "Your like counts." : "Your like was already counted.")
        : (a.changed ? "Your like is taken back." : "You had no like to take back.");
    }, (e) => {
      press(!on);
      note.textContent = "";
      say(e);
    });
  };
}

// feed lists the posts, most liked first (or, with a trend, trending
// first, at the reader's choice), each with its likes and views.
function feed({ collection: name, like: likes, view: views, comments, children, today, todayOf, hot, hotOf, rank }) {
  $("feed").hidden = false;
  const shown = new Map();
  const posts = $("posts");
  // place shows the posts in a new order, unless the pointer is over them:
  // a post that moved under it would put another's Like button where the
  // reader is about to click. The order is held until the pointer leaves.
  let held = null;
  const place = (els) => {
    const same = els.length === posts.children.length && els.every((e, i) => posts.children[i] === e);
    if (!same && posts.children.length > 0 && posts.matches(":hover")) {
      held = els;
      posts.dataset.held = "true";
      return;
    }
    held = null;
    delete posts.dataset.held;
    if (!same) posts.replaceChildren(...els);
  };
  posts.addEventListener("pointerleave", () => held && place(held));
  let stop = () => {};
  const list = (field) => {
    stop();
    $("order").textContent = field === hot ? "trending first: likes and views of the last hours weigh most" : "most liked first";
    for (const b of $("orders").querySelectorAll("button")) b.setAttribute("aria-pressed", String(b.dataset.field === field));
    stop = onSnapshot(query(collection(db, name), orderBy(field, "desc"), limit(20)), (snap) => {
      const els = snap.docs.map((d) => {
        const fresh = d.metadata.hasPendingWrites; // written here, and not yet on the server
        if (!shown.has(d.id)) shown.set(d.id, post(`${name}/${d.id}`, { likes, views, comments, children, today, todayOf, hot, hotOf, rank, fresh }));
        const el = shown.get(d.id);
        el.querySelector("h2").textContent = d.get("title") ?? d.id;
        el.series?.(today ? seriesOf(d.data(), today) : []);
        el.trend?.(trendNow(d.data(), hot));
        return el;
      });
      place(els); // in the query's order
    }, say);
  };
  $("orders").hidden = !hot;
  $("by-likes").dataset.field = likes;
  $("by-trend").dataset.field = hot ?? "";
  for (const b of $("orders").querySelectorAll("button")) b.onclick = () => list(b.dataset.field ?? likes);
  list(likes);
  if (config.authHost) write(name, { likes, views, comments, rank });
}

// write lets a signed-in user write posts of their own, as the rules allow
// (its owner, its counts at 0), and shows the best place among them.
function write(name, { likes, views, comments, rank }) {
  const form = $("write");
  let stop = () => {};
  onAuthStateChanged(auth, (u) => {
    form.hidden = !u;
    stop();
    $("mine").hidden = true;
    if (u && rank) stop = mine(name, u.uid, rank);
  });
  form.onsubmit = (e) => {
    e.preventDefault();
    const title = form.elements.namedItem("title");
    const data = { title: title.value, owner: auth.currentUser?.uid, [likes]: 0, created: serverTimestamp() };
    if (views) data[views] = 0;
    if (comments) data[comments] = 0;
    addDoc(collection(db, name), data).catch(say);
    title.value = "";
  };
}

// mine follows the places of the posts of the user uid, each from onRank
// (a new post has one once tally has put it on the board), and shows the
// best. Returns the function that stops it.
function mine(name, uid, rank) {
  const places = new Map(), stops = new Map();
  const show = () => {
    const best = [...places.values()].sort((a, b) => a.rank - b.rank)[0];
    $("mine").hidden = !best;
    if (!best) return;
    $("my-title").textContent = best.title;
    $("my-place").textContent = `#${best.rank} of ${best.of}`;
  };
  const off = onSnapshot(query(collection(db, name), where("owner", "==", uid)), (snap) => {
    for (const d of snap.docs) {
      if (stops.has(d.id)) continue;
      stops.set(d.id, onRank(tally, `${name}/${d.id}`, rank, (p) => {
        places.set(d.id, { ...p, title: String(d.get("title") ?? d.id) });
        show();
      }, say));
    }
  }, say);
  return () => {
    off();
    for (const s of stops.values()) s();
  };
}

// spark draws counts, a week's likes (or views) by day, as bars in svg,
// and labels them; a week of none is said in words, not drawn.
function spark(svg, label, counts, noun) {
  const none = counts.every((n) => n === 0);
  svg.toggleAttribute("hidden", none); // an svg element has no hidden property
  label.textContent = none ? "none in 7 days" : "7 days";
  const top = Math.max(1, ...counts);
  svg.replaceChildren(...counts.map((n, i) => {
    const bar = document.createElementNS("http://www.w3.org/2000/svg", "rect");
    const h = n > 0 ? Math.max(2, (18 * n) / top) : 1;
    for (const [k, v] of Object.entries({ x: i * 10, y: 20 - h, width: 8, height: h, rx: 1 })) bar.setAttribute(k, String(v));
    if (n === 0) bar.setAttribute("class", "zero");
    return bar;
  }));
  svg.setAttribute("aria-label", `${noun[0].toUpperCase()}${noun.slice(1)} each day of the last ${counts.length}: ${counts.join(", ")}`);
}

function post(path, { likes, views, comments, children, today, todayOf, hot, hotOf, rank, fresh }) {
  const el = document.createElement("article");
  el.className = "card";
  el.dataset.id = path.split("/").pop();
  const stat = (cls, noun) => `<span><b class="${cls}">…</b> <span class="${cls}-noun">${noun}</span></span>`;
  // today's count, with the week's sparkline beside it and labelled, so
  // that it wraps with the counts, not alone on a line of its own
  const week = today && `<span class="week">${stat("today", `${todayOf} today`)} <svg class="spark" viewBox="0 0 70 20" role="img"></svg><span class="week-label">7 days</span></span>`;
  // the trend on a line of its own, with what it weighs
  const trend = hot ? `<p class="trend" title="${hotOf.title}">trending <b class="hot">…</b> ${hotOf.unit}</p>` : "";
  el.innerHTML = `<h2></h2><div class="actions"><button class="like" aria-pressed="false">Like</button>` +
    `<span class="stats">${[stat("likes", "likes"), views && stat("views", "views"), comments && stat("comments", "comments"), week,
      rank && `<span class="place" title="its place among all posts by ${rank}"></span>`].filter(Boolean).join(" · ")}</span></div>` + trend +
    `<p class="note" aria-live="polite"></p>` +
    (comments ? `<ul class="said" aria-label="Latest comments"></ul><form class="comment" hidden><input name="text" placeholder="Write a comment" aria-label="Your comment" required maxlength="500"><button>Comment</button></form>` : "");
  const show = (cls, one, many) => (n) => {
    el.querySelector(`.${cls}`).textContent = String(n);
    el.querySelector(`.${cls}-noun`).textContent = plural(n, one, many);
  };
  if (comments) {
    // A comment shows in the count at once, and once: addChild.
    const counted = countRef(tally, path, comments);
    onCount(counted, show("comments", "comment", "comments"), say);
    // The latest comments, each shown as soon as it is written.
    const said = el.querySelector(".said");
    onSnapshot(query(collection(db, `${path}/${children}`), orderBy("createdAt", "desc"), limit(3)), (snap) => {
      said.replaceChildren(...snap.docs.slice().reverse().map((d) => {
        const li = document.createElement("li");
        const who = document.createElement("span");
        who.className = "who";
        const at = d.get("createdAt")?.toDate?.();
        who.textContent = `${d.get("author") ?? "someone"} · ${at ? ago(at) : "just now"}`;
        const text = document.createElement("span");
        text.className = "text";
        text.textContent = String(d.get("text") ?? "");
        li.append(who, text);
        return li;
      }));
    }, say);
    const form = el.querySelector("form");
    onAuthStateChanged(auth, (u) => (form.hidden = !u)); // the rules let signed-in users comment, as its owner
    form.onsubmit = (e) => {
      e.preventDefault();
      const text = form.elements.namedItem("text");
      const author = auth.currentUser?.email?.split("@")[0] ?? null; // a name, not the address
      addChild(counted, collection(db, `${path}/${children}`), { text: text.value, owner: auth.currentUser?.uid ?? null, author }).catch(say);
      text.value = "";
    };
  }
  const liked = countRef(tally, path, likes);
  const button = el.querySelector(".like"), note = el.querySelector(".note");
  const press = likeButton(button);
  onCount(liked, show("likes", "like", "likes"), say);
  if (config.authHost) onVote(liked, press);
  button.onclick = () => {
    const on = button.getAttribute("aria-pressed") !== "true";
    press(on);
    pending(button, note, like(liked, on)).then(() => (note.textContent = ""), (e) => {
      press(!on);
      note.textContent = "";
      say(e);
    });
  };
  if (rank) {
    // Its place among every post, exact at a time it gives, from Increment
    // each time the board changes: the page never reads the collection.
    onRank(tally, path, rank, (p) => (el.querySelector(".place").textContent = `#${p.rank} of ${p.of}`), say);
  }
  if (today) {
    // Likes today show a press at once, as the likes do; the sparkline's
    // last bar is today, its others the days before, from the feed's
    // snapshot of the post.
    let days = [], now = 0;
    const draw = () => {
      const before = days.slice(0, -1).slice(-6).map((b) => b.count);
      spark(el.querySelector(".spark"), el.querySelector(".week-label"), [...Array(6 - before.length).fill(0), ...before, now], todayOf);
    };
    onCount(countRef(tally, path, today), (n) => {
      show("today", `${todayOf.replace(/s$/, "")} today`, `${todayOf} today`)(n);
      now = n;
      draw();
    }, say);
    el.series = (s) => {
      days = s.length ? s : [{ count: 0 }];
      draw();
    };
  }
  if (hot) el.trend = (score) => (el.querySelector(".hot").textContent = score.toFixed(1));
  if (views) {
    const viewed = countRef(tally, path, views);
    onCount(viewed, show("views", "view", "views"), say);
    // A post written here is viewed once the server holds it.
    signedIn.then(() => fresh && waitForPendingWrites(db)).then(() => addTo(viewed, 1)).catch(say);
  }
  return el;
}
