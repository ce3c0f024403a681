// Where the app finds Firebase and tally in production: fill these in from
// docs/web.md ("From the starter app to production"). On the local stack
// (tally serve --app), the app reads the same from /__/tally/local.json
// instead, and talks to the emulators.
export const production = {
  // firebase apps:sdkconfig web APP_ID --project PROJECT
  firebaseConfig: { apiKey: "API_KEY", authDomain: "PROJECT.firebaseapp.com", projectId: "PROJECT", appId: "APP_ID" },
  // gcloud recaptcha keys create ... (the key's id), registered with App Check
  siteKey: "SITE_KEY",
  // the deployed Increment: deploy/deploy.sh prints it when it is done ("Increment is at ...")
  url: "https://us-central1-PROJECT.cloudfunctions.net/tally-increment",
};

// The post the button likes: a document of your app's, whose likes tally
// keeps as likes=count(likes), the number of its likes/{uid} documents.
export const post = "posts/hello";
