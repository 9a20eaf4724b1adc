import "../common/app.js";
