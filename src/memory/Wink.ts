/**
 * The one wink-nlp pipeline (English lite model) of the process, shared by offline fact extraction and offline
 * consolidation. Each instance builds its own lexicon structures: a second one held 9 MB more heap after a GC.
 * Documents are read independently, so sharing it changes no result; nothing may teach it custom entities, which
 * every user would then see.
 */
import winkNLP from "wink-nlp"
import model from "wink-eng-lite-web-model"

export const wink = winkNLP(model)
