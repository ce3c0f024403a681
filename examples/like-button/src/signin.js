// Sign-in and sign-up with email and password, as an app in production
// does them: signing in never makes an account, making one is its own
// action, and every error a person can cause is said in plain words.
// The demo that tally serve serves uses this file too.
import { createUserWithEmailAndPassword, sendPasswordResetEmail, signInWithEmailAndPassword } from "firebase/auth";

/**
 * What to tell a person when Firebase Auth refused what they did: in
 * words, never a code. With email enumeration protection on (the default
 * for new projects), a wrong password and an unknown email are the same
 * error, auth/invalid-credential, on purpose: the message must not say
 * which it was.
 * @param {unknown} e the error Firebase Auth threw
 * @returns {string}
 */
export function authMessage(e) {
  const code = /** @type {{code?: string}} */ (e)?.code ?? "";
  switch (code) {
    case "auth/invalid-credential":
    case "auth/wrong-password":
    case "auth/user-not-found":
    case "auth/invalid-login-credentials":
      return "That email and password do not match an account. Check them, or create an account.";
    case "auth/invalid-email":
    case "auth/missing-email":
      return "That is not an email address.";
    case "auth/missing-password":
      return "Please enter your password.";
    case "auth/email-already-in-use":
      return "There is already an account with that email. Sign in instead.";
    case "auth/weak-password":
    case "auth/password-does-not-meet-requirements":
      return "Choose a longer password: 6 characters or more.";
    case "auth/too-many-requests":
      return "Too many tries. Wait a few minutes, or reset your password.";
    case "auth/user-disabled":
      return "This account has been turned off.";
    case "auth/network-request-failed":
      return "The sign-in service cannot be reached. Check your connection and try again.";
    case "auth/operation-not-allowed":
      return "Sign-in with email and password is not turned on for this app.";
    case "auth/popup-closed-by-user":
    case "auth/cancelled-popup-request":
      return "";
  }
  return "Signing in did not work just now. Please try again.";
}

/**
 * What to tell a person whose password-reset email was asked for. The
 * local Auth emulator sends no email: it says where the link is instead.
 * @param {import("firebase/auth").Auth} auth
 * @returns {string}
 */
export function resetMessage(auth) {
  const emu = auth.emulatorConfig;
  if (!emu) return "If there is an account with that email, a link to reset its password is on its way.";
  const at = `${emu.protocol}://${emu.host}${emu.port ? `:${emu.port}` : ""}`;
  return "This is the local Auth emulator, which sends no email: open " +
    `${at}/emulator/v1/projects/${auth.app.options.projectId}/oobCodes and follow the oobLink there to reset the password.`;
}

/**
 * Wires a sign-in form: its submit signs in (and never makes an
 * account), its button named "create" makes an account, its button named
 * "reset" sends a password-reset email. say shows a message ("" clears
 * it), of kind "error" for what went wrong and "info" otherwise.
 * @param {import("firebase/auth").Auth} auth
 * @param {HTMLFormElement} form with inputs named email and password
 * @param {(message: string, kind: "error" | "info") => void} say
 */
export function wireSignIn(auth, form, say) {
  const field = (name) => /** @type {HTMLInputElement} */ (form.elements.namedItem(name));
  const act = async (what, done = "") => {
    say("", "info");
    try {
      await what(field("email").value.trim(), field("password").value);
      say(done, "info");
    } catch (e) {
      say(authMessage(e), "error");
    }
  };
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const create = /** @type {SubmitEvent} */ (ev).submitter?.getAttribute("name") === "create";
    act((email, password) => (create ? createUserWithEmailAndPassword : signInWithEmailAndPassword)(auth, email, password));
  });
  const reset = form.querySelector('button[name="reset"]');
  reset?.addEventListener("click", () => {
    if (!field("email").reportValidity()) return;
    act((email) => sendPasswordResetEmail(auth, email), resetMessage(auth));
  });
}
