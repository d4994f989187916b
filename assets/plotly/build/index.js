'use strict';
// plotly.js's core (with the scatter trace) and the two traces Abstract Atlas draws besides it.
var Plotly = require('plotly.js/lib/core');

Plotly.register([
    require('plotly.js/lib/scattergl'), // the map
    require('plotly.js/lib/bar'), // an opened topic's keywords and venues
]);

module.exports = Plotly;
