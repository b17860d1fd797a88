{{/*
The umbrella renders one object of its own, the release's default-deny NetworkPolicy (templates/networkpolicy.yaml);
every helper it needs comes from the grpo-common library.
*/}}
