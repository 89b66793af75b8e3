// What pi 1.6 itself would send next for a session file: its own session loading and
// projection, its own message transform for the session's model, and the provider request it
// builds (captured in `onPayload`, before any network use).
//
//   node pi_context.mjs SESSION.jsonl PI_NODE_MODULES [BASE_URL]
//
// Prints one JSON object: {model, thinkingLevel, messages, transformed, payload, error}.
// Written for pitui's tests; it only calls pi's public functions and shares none of its code.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [sessionPath, modulesDir, baseUrl] = process.argv.slice(2);
const load = (relative) => import(pathToFileURL(join(modulesDir, relative)).href);

const sessions = await load("@earendil-works/pi-coding-agent/dist/core/session-manager.js");
const llmMessages = await load("@earendil-works/pi-coding-agent/dist/core/messages.js");
const transform = await load("@earendil-works/pi-ai/dist/api/transform-messages.js");

const STREAMS = {
    "anthropic-messages": "anthropic-messages.js",
    "openai-responses": "openai-responses.js",
    "openai-completions": "openai-completions.js",
    "google-generative-ai": "google-generative-ai.js",
};

async function catalogModel(provider, id) {
    let module;
    try {
        module = await load(`@earendil-works/pi-ai/dist/providers/${provider}.models.js`);
    } catch {
        return undefined;
    }
    for (const [name, models] of Object.entries(module)) {
        if (!name.endsWith("_MODELS") || /IMAGE|CLASSIFIER/.test(name)) continue;
        if (models[id]) return models[id];
    }
    return undefined;
}

/** A model pi's catalog lacks (Ollama, or a newer name) as a user would declare it in
 * models.json: the api the session's own replies recorded. */
function customModel(provider, id, api) {
    return {
        id,
        name: id,
        api: api ?? "openai-completions",
        provider,
        baseUrl: baseUrl ?? "http://localhost:11434/v1",
        reasoning: true,
        input: ["text"],
        cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
        contextWindow: 40960,
        maxTokens: 8192,
    };
}

const entries = sessions.parseSessionEntries(readFileSync(sessionPath, "utf8"));
sessions.migrateSessionEntries(entries);
const body = entries.filter((entry) => entry.type !== "session");
const context = sessions.buildSessionContext(body);
const { provider, modelId } = context.model ?? {};
const found = await catalogModel(provider, modelId);
const recordedApi = [...context.messages].reverse().find((m) => m.role === "assistant")?.api;
const model = {
    ...(found ?? customModel(provider, modelId, recordedApi)),
    ...(baseUrl ? { baseUrl } : {}),
};
const messages = llmMessages.convertToLlm(context.messages);
const transformed = transform.transformMessages(messages, model);

let payload;
let error;
const api = await load(`@earendil-works/pi-ai/dist/api/${STREAMS[model.api]}`);
const level = context.thinkingLevel && context.thinkingLevel !== "off" ? context.thinkingLevel : undefined;
const events = api.streamSimple(model, { messages }, {
    apiKey: "pi-check-no-network",
    reasoning: level,
    maxRetries: 0,
    onPayload: (params) => {
        payload = params;
        throw new Error("payload captured");
    },
});
for await (const event of events) {
    if (event.type === "error" && !payload) error = event.error?.errorMessage ?? String(event.error);
    if (event.type === "done" || event.type === "error") break;
}

process.stdout.write(
    JSON.stringify({
        model: { id: model.id, provider: model.provider, api: model.api, catalog: Boolean(found) },
        thinkingLevel: context.thinkingLevel,
        messages,
        transformed,
        payload,
        error,
    }),
);
