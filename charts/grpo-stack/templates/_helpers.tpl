{{/*
The umbrella renders no objects of its own: every helper it needs comes from the grpo-common library.
*/}}
