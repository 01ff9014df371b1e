// Progressive enhancement only: every form works without this file.
document.documentElement.classList.add("js");
document.addEventListener("DOMContentLoaded", () => {
  // 5.5.2: the variant switch shows the chosen variant's fields at once (without JS a button re-renders the form).
  for (const radio of document.querySelectorAll("input[data-switch]")) {
    radio.addEventListener("change", () => {
      const prefix = radio.dataset.switch;
      for (const fs of document.querySelectorAll(`fieldset.variant[data-prefix="${prefix}"]`)) {
        const on = fs.dataset.variant === radio.value;
        fs.hidden = !on;
        fs.disabled = !on;
      }
    });
  }
  // A picked suggestion fills the resource input (the server also accepts the radio alone).
  for (const radio of document.querySelectorAll('input[name="source.resource_choice"]')) {
    radio.addEventListener("change", () => {
      const input = document.getElementById("f-resource");
      if (input && radio.value) input.value = radio.value;
    });
  }
  // Removing and deleting ask first.
  for (const form of document.querySelectorAll("form[data-confirm]")) {
    form.addEventListener("submit", (event) => {
      if (!window.confirm(form.dataset.confirm)) event.preventDefault();
    });
  }
});
