exports = function() { return { status: "pending" }; };
