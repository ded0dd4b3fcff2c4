exports = async function() { return { chores: 0 }; };
