// The sources, typed by their JSDoc, are the API that index.d.ts declares:
// tsc (npm run typecheck) fails if either drifts from the other.
import * as sources from "./src/index.js";
import type * as declared from "@tallycounters/web";

sources satisfies typeof declared;

// Nor do the sources export anything it does not declare.
type Undeclared = Exclude<keyof typeof sources, keyof typeof declared>;
export const noneUndeclared: [Undeclared] extends [never] ? true : Undeclared = true;

// The same of the rank entry, @tallycounters/web/rank.
import * as rankSources from "./src/rank.js";
import type * as rankDeclared from "@tallycounters/web/rank";

rankSources satisfies typeof rankDeclared;
type RankUndeclared = Exclude<keyof typeof rankSources, keyof typeof rankDeclared>;
export const noRankUndeclared: [RankUndeclared] extends [never] ? true : RankUndeclared = true;

// The same of the likes entry, @tallycounters/web/likes.
import * as likesSources from "./src/likes.js";
import type * as likesDeclared from "@tallycounters/web/likes";

likesSources satisfies typeof likesDeclared;
type LikesUndeclared = Exclude<keyof typeof likesSources, keyof typeof likesDeclared>;
export const noLikesUndeclared: [LikesUndeclared] extends [never] ? true : LikesUndeclared = true;
