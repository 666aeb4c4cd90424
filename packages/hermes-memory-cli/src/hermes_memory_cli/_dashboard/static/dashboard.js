// hermes-memory dashboard: small progressive enhancement. Every page works without it.
"use strict";
document.addEventListener("submit", function (event) {
  var form = event.target;
  var question = form.getAttribute("data-confirm");
  if (question && !window.confirm(question)) {
    event.preventDefault();
  }
});

// Live progress of background jobs on the archive page.
(function () {
  var boxes = document.querySelectorAll(".job[data-running]");
  if (!boxes.length) { return; }
  var words = document.getElementById("job-words");
  function poll() {
    fetch("/archive/progress", { credentials: "same-origin" })
      .then(function (r) { return r.json(); })
      .then(function (jobs) {
        var busy = false;
        boxes.forEach(function (box) {
          var job = jobs[box.getAttribute("data-job")];
          if (!job) { return; }
          var bar = box.querySelector("progress");
          var status = box.querySelector(".job-status");
          bar.hidden = false;
          bar.max = job.total || 1;
          bar.value = job.done;
          if (job.running) {
            busy = true;
            status.textContent = words.dataset.working + " " + job.done + " / " + job.total;
          } else if (job.error) {
            status.textContent = words.dataset.stopped + " " + job.error;
          } else {
            status.textContent = words.dataset.done;
          }
        });
        if (busy) { window.setTimeout(poll, 700); }
      })
      .catch(function () { window.setTimeout(poll, 2000); });
  }
  poll();
})();
